"""tests/fakes/google_storage.py answers aiplatform's own bucket check as
Cloud Storage does: the SDK (v1.165.1, utils/gcs_utils.py lines 357-387)
creates a missing root bucket, and calls a bucket whose `projectNumber` is
another project's "bucket squatting"; kubeflow/api/vertex_bucket.py's check,
with Resource Manager's number (tests/fakes/google_apis.py), refuses both."""

import pytest
from google.api_core import exceptions
from google.cloud import storage
from google.cloud.aiplatform.utils import gcs_utils
from google.oauth2.credentials import Credentials

from kubeflow.api import vertex_bucket
from kubeflow.errors import KubeflowError
from tests.fakes.google_apis import ResourceManager
from tests.fakes.google_storage import StorageServer
from tests.fakes.vertex_api import TOKEN

NUMBER, THEIRS = "123456789012", "999999999999"


class Buckets:
  def __init__(self):
    self.names = ["my-runs"]

  def list_buckets(self):
    return {"Buckets": [{"Name": n} for n in self.names]}

  def create_bucket(self, Bucket):
    self.names.append(Bucket)


@pytest.fixture
def google(tmp_path, monkeypatch):
  """my-project (NUMBER) with my-runs; their-runs another project's,
  hidden-runs one the user may not read; the user signed in with TOKEN."""
  found = Buckets()
  server = StorageServer(found, NUMBER, {"their-runs": THEIRS, "hidden-runs": None})
  manager = ResourceManager(str(tmp_path), "my-project", NUMBER, TOKEN)
  for key, value in {**server.env, **manager.env}.items():
    monkeypatch.setenv(key, value)
  from google.cloud.aiplatform import initializer
  monkeypatch.setattr(initializer.global_config, "_credentials", Credentials(TOKEN))
  yield found
  server.close()
  manager.close()


def sdk_check(root: str) -> str:
  return gcs_utils.create_gcs_bucket_for_pipeline_artifacts_if_it_does_not_exist(
      output_artifacts_gcs_dir=root, service_account="runner@my-project.iam.gserviceaccount"
      ".com", project="my-project", location="us-central1", credentials=Credentials(TOKEN))


def test_the_sdk_creates_a_missing_bucket_which_the_check_refuses(google):
  with pytest.raises(KubeflowError, match="found no bucket gs://my-rusn: create it"):
    vertex_bucket.check("gs://my-rusn/p", "my-project", "us-central1")
  assert sdk_check("gs://my-rusn/p") == "gs://my-rusn/p"
  assert "my-rusn" in google.names  # what the check stops first


def test_the_sdk_calls_another_projects_bucket_squatting_and_the_check_refuses_it(google):
  with pytest.raises(ValueError, match="bucket squatting"):
    sdk_check("gs://their-runs/p")
  with pytest.raises(KubeflowError, match=f"owned by project number {THEIRS}"):
    vertex_bucket.check("gs://their-runs/p", "my-project", "us-central1")
  sdk_check("gs://my-runs/p")  # the project's own: no error
  vertex_bucket.check("gs://my-runs/p", "my-project", "us-central1")


def test_a_hidden_bucket_is_forbidden_and_a_taken_name_cannot_be_created(google):
  client = storage.Client(project="my-project", credentials=Credentials(TOKEN))
  with pytest.raises(exceptions.Forbidden, match="storage.buckets.get"):
    client.lookup_bucket("hidden-runs")
  with pytest.raises(exceptions.Conflict):
    client.create_bucket("their-runs")
  assert client.lookup_bucket("nope") is None
  assert client.lookup_bucket("their-runs").project_number == int(THEIRS)

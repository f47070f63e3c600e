"""kubeflow/api/vertex_bucket.py: a pipeline root whose bucket is missing,
another project's, or hidden from the user stops a Vertex submit or schedule
in one line, before aiplatform can create the bucket or write a run into
another project's (utils/gcs_utils.py@v1.165.1 lines 357-387). Against
tests/fakes/google_storage.py's bucket API, in a thread; the project's
number is Resource Manager's (tests/standins/test_google_storage.py asks it)."""

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud.aiplatform import initializer
from google.cloud.aiplatform.utils import resource_manager_utils

from kubeflow.api import vertex_bucket
from kubeflow.errors import KubeflowError
from tests.fakes.google_storage import StorageServer

NUMBER = "123456789012"


class Buckets:
  """The S3 stand-in's bucket list, as google_storage reads it."""

  def __init__(self, *names):
    self.names, self.created = list(names), []

  def list_buckets(self):
    return {"Buckets": [{"Name": n} for n in self.names]}

  def create_bucket(self, Bucket):
    self.created.append(Bucket)


@pytest.fixture(scope="module")
def server():
  found = Buckets("my-runs")
  server = StorageServer(found, NUMBER, {"their-runs": "999999999999", "hidden-runs": None})
  yield server, found
  server.close()


@pytest.fixture
def buckets(server, monkeypatch):
  """The user's project, my-project, with its bucket my-runs; their-runs is
  another project's, hidden-runs one the user may not read."""
  for key, value in server[0].env.items():
    monkeypatch.setenv(key, value)
  monkeypatch.setattr(initializer.global_config, "_credentials", AnonymousCredentials())
  monkeypatch.setattr(resource_manager_utils, "get_project_number",
                      lambda project, credentials=None: {"my-project": NUMBER}[project])
  return server[1]


def refused(root: str) -> str:
  with pytest.raises(KubeflowError) as e:
    vertex_bucket.check(root, "my-project", "europe-west4")
  assert "\n" not in str(e.value)
  return str(e.value)


def test_the_projects_own_bucket_passes(buckets):
  vertex_bucket.check("gs://my-runs/pipelines", "my-project", "europe-west4")


def test_a_missing_bucket_is_refused_naming_how_to_make_it_and_none_is_made(buckets):
  assert refused("gs://my-rusn/pipelines") == (
      "--pipeline-root gs://my-rusn/pipelines: expected a bucket of project my-project, "
      "found no bucket gs://my-rusn: create it with `gsutil mb -p my-project -l "
      "europe-west4 gs://my-rusn`, or give --pipeline-root a bucket of project my-project")
  assert buckets.created == []


def test_another_projects_bucket_is_refused_naming_both_numbers(buckets):
  assert refused("gs://their-runs/p") == (
      f"--pipeline-root gs://their-runs/p: expected a bucket of project my-project (number "
      f"{NUMBER}), found gs://their-runs owned by project number 999999999999: create it "
      "with `gsutil mb -p my-project -l europe-west4 gs://their-runs`, or give "
      "--pipeline-root a bucket of project my-project")


def test_a_bucket_the_user_may_not_read_is_refused_naming_the_permission(buckets):
  message = refused("gs://hidden-runs/p")
  assert message.startswith("--pipeline-root gs://hidden-runs/p: expected a bucket of project "
                            "my-project, found gs://hidden-runs refused to your account "
                            "(storage.buckets.get denied"), message
  assert "gsutil mb -p my-project -l europe-west4 gs://hidden-runs" in message


def test_a_root_not_in_cloud_storage_is_left_to_the_location_check():
  vertex_bucket.check("", "my-project", "europe-west4")  # no call: nothing listens

"""kubeflow/api/vertex_bucket.py: a pipeline root whose bucket is missing or
another project's stops a Vertex submit or schedule in one line, before
aiplatform can create the bucket or write a run into another project's
(utils/gcs_utils.py@v1.165.1 lines 357-387); what the SDK cannot check
either (a bucket hidden from the user, a project number Resource Manager
will not give) goes on, with one warning line (lines 84-91). Against
tests/fakes/google_storage.py's bucket API, in a thread; the project's
number is Resource Manager's (tests/standins/test_google_storage.py asks it)."""

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud.aiplatform import initializer
from google.cloud.aiplatform.utils import resource_manager_utils

from kubeflow.api import vertex_bucket
from kubeflow.errors import KubeflowError
from tests.fakes.google_storage import StorageServer

NUMBER = "123456789012"
RM_OFF = ("Cloud Resource Manager API has not been used in project 123456789012 before or it "
          "is disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
          "cloudresourcemanager.googleapis.com/overview?project=123456789012 then retry.")


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
  found = Buckets("my-runs", "object-runs")
  server = StorageServer(found, NUMBER, {"their-runs": "999999999999", "hidden-runs": None},
                         unreadable=["object-runs"])
  yield server, found
  server.close()


@pytest.fixture
def buckets(server, monkeypatch):
  """The user's project, my-project, with its buckets my-runs and
  object-runs (on which the user holds object roles only); their-runs is
  another project's, hidden-runs one the user may not read. Resource
  Manager refuses my-projcet (no such project: 403, "The caller does not
  have permission", as tests/fakes/google_apis.py answers) and, in
  rm-off, is not enabled."""
  for key, value in server[0].env.items():
    monkeypatch.setenv(key, value)
  monkeypatch.setattr(initializer.global_config, "_credentials", AnonymousCredentials())

  def get_project_number(project, credentials=None):
    if project == "rm-off":
      raise exceptions.PermissionDenied(RM_OFF)
    if project != "my-project":
      raise exceptions.PermissionDenied("The caller does not have permission")
    return NUMBER
  monkeypatch.setattr(resource_manager_utils, "get_project_number", get_project_number)
  return server[1]


def refused(root: str) -> str:
  with pytest.raises(KubeflowError) as e:
    vertex_bucket.check(root, "my-project", "europe-west4")
  assert "\n" not in str(e.value)
  return str(e.value)


def test_the_projects_own_bucket_passes(buckets):
  assert vertex_bucket.check("gs://my-runs/pipelines", "my-project", "europe-west4") is None


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


@pytest.mark.parametrize("name", ["object-runs", "hidden-runs"])
def test_a_bucket_the_user_may_not_read_goes_on_with_a_warning_as_vertex_does(buckets, name):
  # object-runs is the user's own, read and written with object roles only.
  assert vertex_bucket.check(f"gs://{name}/p", "my-project", "europe-west4") == (
      f"--pipeline-root gs://{name}/p: could not check that gs://{name} is project "
      "my-project's: storage.buckets.get was refused to your account; going on, as Vertex "
      "AI does")


def test_a_mistyped_project_goes_on_with_a_warning_naming_project(buckets):
  warning = vertex_bucket.check("gs://my-runs/p", "my-projcet", "europe-west4")
  assert warning == (
      "--pipeline-root gs://my-runs/p: could not check that gs://my-runs is project "
      "my-projcet's: Resource Manager refused to read project my-projcet (The caller does "
      "not have permission): check --project my-projcet, which it answers so when no such "
      "project exists, or grant your account resourcemanager.projects.get on it; going on, "
      "as Vertex AI does")
  assert "aiplatform.user" not in warning


def test_resource_manager_off_goes_on_with_a_warning_naming_how_to_enable_it(buckets):
  assert vertex_bucket.check("gs://my-runs/p", "rm-off", "europe-west4") == (
      "--pipeline-root gs://my-runs/p: could not check that gs://my-runs is project rm-off's: "
      "the Cloud Resource Manager API is not enabled in project rm-off (gcloud services "
      "enable cloudresourcemanager.googleapis.com --project rm-off); going on, as Vertex AI "
      "does")


def test_a_missing_bucket_is_refused_even_when_the_number_cannot_be_read(buckets):
  assert "found no bucket gs://my-rusn" in refused_in("gs://my-rusn/p", "rm-off")


def refused_in(root: str, project: str) -> str:
  with pytest.raises(KubeflowError) as e:
    vertex_bucket.check(root, project, "europe-west4")
  return str(e.value)


def test_a_root_not_in_cloud_storage_is_left_to_the_location_check():
  vertex_bucket.check("", "my-project", "europe-west4")  # no call: nothing listens

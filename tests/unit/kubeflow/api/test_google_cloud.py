"""kubeflow/api/google_cloud.py: what a user without Google credentials, or
with a mistyped region, reads: one line naming the fix, not the SDK's
traceback (google-cloud-aiplatform v1.165.1 looks for credentials on first
need, initializer.py lines 118-120, and checks the region in `init`)."""

import argparse

import pytest
from google.auth.compute_engine import _metadata

from kubeflow.api import google_cloud
from kubeflow.errors import KubeflowError


@pytest.fixture
def no_credentials(tmp_path, monkeypatch):
  """A machine with no Application Default Credentials, no gcloud sign-in
  and no metadata server (pinged on 127.0.0.1:9 only, where nothing listens)."""
  for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CONFIG"):
    monkeypatch.delenv(name, raising=False)
  monkeypatch.setenv("HOME", str(tmp_path))
  monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
  monkeypatch.setenv("NO_GCE_CHECK", "true")
  # google-auth reads NO_GCE_CHECK once, at its import: without this it
  # pings the metadata server three times, with back-off (3 s).
  monkeypatch.setattr(_metadata, "_NO_GCE_CHECK", True)
  monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
  monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")


@pytest.mark.parametrize("project", ["my-project", None])
def test_no_credentials_is_one_line_naming_how_to_sign_in(no_credentials, project):
  with pytest.raises(KubeflowError) as refused:
    google_cloud.connect(project, "us-central1")
  assert str(refused.value) == (
      "no Google Cloud credentials: sign in with `gcloud auth application-default login`, "
      "or set GOOGLE_APPLICATION_CREDENTIALS to a service account's key file")


def test_a_mistyped_region_names_the_closest_and_the_valid_ones(no_credentials):
  with pytest.raises(argparse.ArgumentTypeError) as refused:
    google_cloud.connect("my-project", "us-centrl1")
  message = str(refused.value)
  assert message.startswith("--region us-centrl1: did you mean us-central1? expected a "
                            "Vertex AI region, one of "), message
  assert "europe-west4" in message and "\n" not in message


def test_a_project_resource_manager_refuses_names_project_not_a_vertex_role(monkeypatch):
  # Resource Manager answers a project that does not exist with 403, as
  # tests/fakes/google_apis.py does; `retention --project` reads its number.
  from google.api_core import exceptions
  from google.cloud.aiplatform.utils import resource_manager_utils

  def refuse(project, credentials=None):
    raise exceptions.PermissionDenied("The caller does not have permission")
  monkeypatch.setattr(resource_manager_utils, "get_project_number", refuse)
  monkeypatch.setattr(google_cloud, "_credentials", lambda: (None, None))
  with pytest.raises(KubeflowError) as refused:
    google_cloud.project_number("my-projcet")
  assert str(refused.value) == (
      "reading the number of project my-projcet failed: Resource Manager refused to read "
      "project my-projcet (The caller does not have permission): check --project my-projcet, "
      "which it answers so when no such project exists, or grant your account "
      "resourcemanager.projects.get on it")


@pytest.mark.parametrize("typed, region", [("US", "us"), ("global", "global"),
                                           ("Europe-West4", "europe-west4")])
def test_a_region_aiplatform_takes_is_taken_in_lower_case(typed, region):
  assert google_cloud._region(typed) == region

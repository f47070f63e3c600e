"""kubeflow/doctor/vertex.py: `doctor` on a spec the real compile wrote for
Vertex AI (two CustomJob workers with an L4 each), in this process, against
the STAND-IN Vertex AI (tests/fakes/vertex_pipelines.py: its metadata
server signs the user in, its bucket API and Resource Manager answer the
bucket check, its PipelineService the API's). Issue 73's planted
misconfigurations each make one FAIL line naming the fix, and exit 1."""

import json

import pytest
import yaml
from google.auth.compute_engine import _metadata
from google.cloud.aiplatform import initializer

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile.backend import header
from kubeflow.doctor import vertex
from tests.conftest import compile_digits_spec
from tests.fakes.vertex_pipelines import StandInVertexPipelines

PROJECT, NUMBER, REGION = "user-project", "123456789012", "us-central1"
ROOT = "gs://b/p"  # compile_digits_spec's root, a bucket of the project
DISABLED = ("Vertex AI API has not been used in project 123456789012 before or it is disabled. "
            "Enable it by visiting https://console.developers.google.com/apis/api/"
            "aiplatform.googleapis.com/overview?project=123456789012 then retry.")


class Buckets:
  """The project's buckets, as tests/fakes/google_storage.py reads the S3 stand-in's."""

  def list_buckets(self):
    return {"Buckets": [{"Name": "b"}]}


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
  with StandInVertexPipelines(str(tmp_path_factory.mktemp("vertex")), Buckets(), {},
                              project=PROJECT, project_number=NUMBER, region=REGION) as vp:
    vp.other_buckets.update({"their-runs": "999999999999", "hidden-runs": None})
    yield vp


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
  return compile_digits_spec(
      tmp_path_factory.mktemp("c"), "--backend", "vertex", "--train-workers", "2",
      "--train-engine", "vertex", "--resource", "Trainer:gpus=1,gpu_type=NVIDIA_L4")


@pytest.fixture
def vp(standin, monkeypatch):
  """The user signed in on the stand-in's metadata server (no key file, no
  gcloud sign-in), as on a Compute Engine VM; aiplatform's settings, which
  `connect` sets, restored after."""
  for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_REGION",
               "CLOUD_ML_REGION", "NO_GCE_CHECK"):
    monkeypatch.delenv(name, raising=False)
  from google.auth.compute_engine import _metadata
  for key, value in standin.env.items():
    monkeypatch.setenv(key, value)
  # google-auth reads the metadata host once, at its import (_metadata.py).
  monkeypatch.setattr(_metadata, "_GCE_METADATA_HOST", standin.env["GCE_METADATA_HOST"])
  for kept in ("_project", "_location", "_credentials", "_api_endpoint", "_api_transport"):
    monkeypatch.setattr(initializer.global_config, kept, getattr(initializer.global_config, kept))
  return standin


def edited(path: str, tmp_path, root: str = ROOT, machine: str = "") -> str:
  """A copy of the spec at `path` with another root, or the workers' machine."""
  with open(path, encoding="utf-8") as f:
    documents = list(yaml.safe_load_all(f))
  documents[0]["defaultPipelineRoot"] = root
  if machine:
    for executor in documents[0]["deploymentSpec"]["executors"].values():
      for env in executor.get("container", {}).get("env", []):
        if env["name"] == "TRAIN_JOB_POD":
          env["value"] = json.dumps({**json.loads(env["value"]), "machineType": machine})
  copy = tmp_path / "pipeline.yaml"
  copy.write_text(header("vertex") + yaml.safe_dump_all(documents))  # compile's first line
  return str(copy)


def doctor(capsys, path: str, *flags: str):
  """(exit status, the lines printed)."""
  status = kubeflow(["doctor", "--spec", path, "--project", PROJECT, "--region", REGION,
                     *flags])
  return status, capsys.readouterr().out.splitlines()


def failed(found):
  (line,) = [x for x in found if x.startswith("FAIL")]
  return line


def test_a_clean_project_is_all_ok(vp, compiled, capsys):
  status, found = doctor(capsys, compiled)
  assert found == [
      f"ok  the Vertex AI region {REGION}",
      "ok  the Google Cloud credentials (found and refreshed)",
      "ok  the machine of the Trainer's 2 Vertex AI workers (g2-standard-8, each 1 x NVIDIA_L4)",
      f"ok  the Vertex AI API in project {PROJECT}, {REGION}",
      f"ok  the pipeline root's bucket gs://b (project {PROJECT}'s)"]
  assert status == 0


def test_no_credentials_is_one_fail_naming_how_to_sign_in(vp, compiled, capsys, tmp_path,
                                                          monkeypatch):
  monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
  monkeypatch.setenv("HOME", str(tmp_path))
  monkeypatch.setenv("NO_GCE_CHECK", "true")
  # google-auth reads NO_GCE_CHECK once, at its import: without this it
  # pings the metadata server three times, with back-off (3 s).
  monkeypatch.setattr(_metadata, "_NO_GCE_CHECK", True)
  monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
  monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
  status, found = doctor(capsys, compiled)
  assert failed(found) == (
      "FAIL the Google Cloud credentials: no Google Cloud credentials; fix: sign in with "
      "`gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
      "service account's key file")
  assert "not checked the Vertex AI API: needs credentials" in found
  assert status == 1


def test_a_root_bucket_of_another_project_names_the_bucket_and_project(vp, compiled, capsys,
                                                                       tmp_path):
  status, found = doctor(capsys, edited(compiled, tmp_path, "gs://their-runs/p"))
  assert failed(found) == (
      "FAIL the pipeline root's bucket gs://their-runs: --pipeline-root gs://their-runs/p: "
      f"expected a bucket of project {PROJECT} (number {NUMBER}), found gs://their-runs owned "
      "by project number 999999999999; fix: create it with `gsutil mb -p user-project -l "
      f"{REGION} gs://their-runs`, or give --pipeline-root a bucket of project {PROJECT}")
  assert status == 1


def test_an_l4_on_n1_names_the_machine_family_that_takes_it(vp, compiled, capsys, tmp_path):
  """compile refuses it; a spec edited after, or compiled before that check, did not."""
  status, found = doctor(capsys, edited(compiled, tmp_path, machine="n1-standard-8"))
  assert failed(found) == (
      "FAIL the machine of the Trainer's 2 Vertex AI workers (n1-standard-8, each 1 x "
      "NVIDIA_L4): NVIDIA_L4 attaches to g2-* machines only, found n1-standard-8; fix: "
      "compile with --train-machine-type g2-standard-8")
  assert status == 1


def test_a_mistyped_region_names_the_closest_and_leaves_what_needs_it(vp, compiled, capsys):
  status = kubeflow(["doctor", "--spec", compiled, "--project", PROJECT, "--region",
                     "us-centrl1"])
  found = capsys.readouterr().out.splitlines()
  assert failed(found).startswith(
      "FAIL the Vertex AI region: --region us-centrl1: did you mean us-central1? expected a "
      "Vertex AI region, one of "), found
  assert failed(found).endswith("; fix: give --region a Vertex AI region (e.g. us-central1), "
                                "or set $GOOGLE_CLOUD_REGION")
  assert [x for x in found if x.startswith("not checked")] == [
      "not checked the Vertex AI API: needs a valid region",
      f"not checked the pipeline root's bucket {ROOT}: needs a valid region"]
  assert status == 1


def test_a_bucket_the_user_may_not_read_is_not_checked_and_fails_nothing(vp, compiled, capsys,
                                                                         tmp_path):
  status, found = doctor(capsys, edited(compiled, tmp_path, "gs://hidden-runs/p"))
  assert found[-1] == (
      "not checked the pipeline root's bucket gs://hidden-runs: --pipeline-root "
      "gs://hidden-runs/p: could not check that gs://hidden-runs is project user-project's: "
      "storage.buckets.get was refused to your account; going on, as Vertex AI does")
  assert status == 0


def test_the_api_not_enabled_names_the_command_that_enables_it(vp, compiled, capsys,
                                                               monkeypatch):
  from google.api_core import exceptions

  from kubeflow.api import vertex as vertex_api

  class Disabled:
    def list_pipeline_jobs(self, request):
      raise exceptions.Forbidden(DISABLED)
  monkeypatch.setattr(vertex_api, "client", lambda region: Disabled())
  status, found = doctor(capsys, compiled)
  assert failed(found) == (
      f"FAIL the Vertex AI API in project {PROJECT}, {REGION}: the Vertex AI API is not "
      f"enabled in project {PROJECT}; fix: gcloud services enable aiplatform.googleapis.com "
      f"--project {PROJECT}")
  assert status == 1


def test_a_user_without_a_vertex_role_is_told_which_to_grant(vp, compiled, capsys):
  vp.forbidden.add("aiplatform.pipelineJobs.list")
  try:
    status, found = doctor(capsys, compiled)
  finally:
    vp.forbidden.discard("aiplatform.pipelineJobs.list")
  line = failed(found)
  assert line.startswith(f"FAIL the Vertex AI API in project {PROJECT}, {REGION}: permission "
                         "denied ("), line
  assert "aiplatform.pipelineJobs.list" in line
  assert line.endswith(f"; fix: grant your account roles/aiplatform.user on project {PROJECT}, "
                       "and roles/iam.serviceAccountUser on the pipeline's service account")
  assert status == 1


def test_a_message_is_split_at_its_last_colon_outside_the_apis_own_words():
  """An API's message, quoted in parentheses, may hold colons of its own."""
  assert vertex.split("your credentials were refused (invalid_grant: Token has been expired "
                      "or revoked.): sign in again") == (
      "your credentials were refused (invalid_grant: Token has been expired or revoked.)",
      "sign in again")
  assert vertex.split("no colon here") == ("no colon here", "see above")


def test_expired_credentials_are_one_fail_naming_how_to_sign_in_again(vp, compiled, capsys,
                                                                      tmp_path, monkeypatch):
  """`gcloud auth application-default login` of some weeks ago: the user's
  credentials are found, and Google's token endpoint (a local one here)
  refuses their refresh token."""
  import google.auth

  from tests.unit.kubeflow.api.test_vertex import TokenEndpoint, user_credentials
  token = TokenEndpoint()
  monkeypatch.setattr(google.auth, "default",
                      lambda *a, **k: (user_credentials(token.uri), PROJECT))
  try:
    status, found = doctor(capsys, compiled)
  finally:
    token.close()
  assert failed(found) == (
      "FAIL the Google Cloud credentials: your credentials were refused or could not be "
      "refreshed (invalid_grant: Token has been expired or revoked.); fix: sign in again with "
      "`gcloud auth application-default login`, or point GOOGLE_APPLICATION_CREDENTIALS at a "
      "valid service account key"), found
  assert "not checked the Vertex AI API: needs credentials" in found
  assert status == 1

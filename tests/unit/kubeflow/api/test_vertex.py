"""kubeflow/api/vertex.py against the STAND-IN Vertex AI Pipelines
(tests/fakes/vertex_pipelines.py, in this process's threads), through
google-cloud-aiplatform's own REST transport. (Its refusals' wording is
tests/unit/commands/kubeflow/test_runs.py's
test_what_vertex_refuses_is_one_line_naming_the_fix.)"""

import argparse
import http.server
import threading

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import initializer
from google.oauth2.credentials import Credentials

from kubeflow.api import vertex
from kubeflow.errors import KubeflowError
from tests.fakes import vertex_resources
from tests.fakes.google_apis import JsonHandler, ResourceManager
from tests.fakes.vertex_api import TOKEN
from tests.fakes.vertex_pipelines import StandInVertexPipelines

PROJECT, NUMBER, REGION = "user-project", "123456789012", "us-central1"


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
  with StandInVertexPipelines(str(tmp_path_factory.mktemp("vertex")), None, {},
                              project=PROJECT, project_number=NUMBER, region=REGION) as vp:
    yield vp


@pytest.fixture
def vp(standin, monkeypatch):
  """aiplatform pointed at the stand-in as kubeflow/api/google_cloud.py's
  `connect` points it, signed in with the stand-in's token."""
  monkeypatch.setenv("VERTEX_API_ENDPOINT", standin.endpoint)
  for kept in ("_project", "_location", "_credentials", "_api_endpoint", "_api_transport"):
    monkeypatch.setattr(initializer.global_config, kept, getattr(initializer.global_config, kept))
  aiplatform.init(project=PROJECT, location=REGION, api_endpoint=standin.endpoint,
                  api_transport="rest", credentials=Credentials(TOKEN))
  standin.schedules.clear()
  return standin


def paused(vp, name: str) -> dict:
  """A paused schedule of that name, as the service keeps it."""
  schedule = vertex_resources.new_schedule({
      "displayName": name, "cron": "0 3 * * *", "maxConcurrentRunCount": "1",
      "createPipelineJobRequest": {"parent": f"projects/{NUMBER}/locations/{REGION}",
                                   "pipelineJob": {"runtimeConfig": {
                                       "gcsOutputDirectory": "gs://pipelines/root"}}}},
      NUMBER, REGION)
  schedule["state"] = "PAUSED"
  vp.schedules[schedule["name"]] = schedule
  return schedule


def command(action: str, name: str, catchup: bool = False):
  return vertex.schedules_command(argparse.Namespace(
      action=action, name=name, project=PROJECT, region=REGION, catchup=catchup))


def test_what_the_bucket_check_could_not_check_is_one_warning_line_and_the_run_goes_on(
    monkeypatch, capsys):
  from kubeflow.api import vertex_bucket
  monkeypatch.setattr(vertex_bucket, "check", lambda root, project, region: "not checked")
  vertex.check_bucket("gs://b/r", argparse.Namespace(project=PROJECT, region=REGION))
  assert capsys.readouterr().err == "warning: not checked\n"


@pytest.mark.parametrize("catchup", [True, False])
def test_resume_asks_vertex_for_catch_up_only_with_catchup(vp, catchup):
  """aiplatform's `resume(catch_up=True)` sends none (schedules.py@v1.165.1
  lines 120-133); the request's own field does (ResumeScheduleRequest.catch_up)."""
  schedule = paused(vp, "nightly")
  said = command("resume", "nightly", catchup)
  assert schedule["state"] == "ACTIVE"
  assert schedule["catchUp"] is catchup  # the stand-in keeps what the request asked
  assert said == ["resumed: nightly" + (", catching up the runs it missed" if catchup else "")]


class TokenEndpoint:
  """Google's OAuth 2.0 token endpoint refusing a refresh token that expired
  or was revoked (what `gcloud auth application-default login` left, some
  weeks on): 400 invalid_grant (RFC 6749 5.2), which google-auth raises as
  RefreshError("invalid_grant: ...") (google/oauth2/_client.py
  `_handle_error_response`, google-auth 2.62)."""

  def __init__(self):
    def refuse(h):
      h.body()
      h.send(400, {"error": "invalid_grant",
                   "error_description": "Token has been expired or revoked."})
    handler = type("Token", (JsonHandler,), {"do_POST": refuse})
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=self.server.serve_forever, daemon=True).start()
    self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/token"

  def close(self) -> None:
    self.server.shutdown()
    self.server.server_close()


def user_credentials(token_uri: str):
  """Application Default Credentials of a user (authorized_user), with no
  token yet: the first call refreshes at `token_uri`."""
  from google.oauth2.credentials import Credentials as UserCredentials
  return UserCredentials(None, refresh_token="1//expired", token_uri=token_uri,
                         client_id="764086051850-x.apps.googleusercontent.com",
                         client_secret="secret")


def key_credentials():
  """A service account key's credentials (GOOGLE_APPLICATION_CREDENTIALS) of
  a key Google does not know: api_core's clients sign their own JWT with it
  (always_use_jwt_access), which the API refuses with 401."""
  from cryptography.hazmat.primitives import serialization
  from cryptography.hazmat.primitives.asymmetric import rsa
  from google.oauth2 import service_account
  key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
      serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
      serialization.NoEncryption()).decode()
  return service_account.Credentials.from_service_account_info(
      {"type": "service_account", "client_email": f"runner@{PROJECT}.iam.gserviceaccount.com",
       "private_key": key, "private_key_id": "1", "project_id": PROJECT,
       "token_uri": "http://127.0.0.1:9/token"})


@pytest.fixture(scope="module")
def expired():
  endpoint = TokenEndpoint()
  yield user_credentials(endpoint.uri)
  endpoint.close()


def failed(call) -> str:
  with pytest.raises(KubeflowError) as e:
    call()
  assert "\n" not in str(e.value)
  return str(e.value)


SIGN_IN = ("sign in again with `gcloud auth application-default login`, or point "
           "GOOGLE_APPLICATION_CREDENTIALS at a valid service account key")


def test_expired_credentials_are_one_line_naming_how_to_sign_in_on_rest(vp, expired,
                                                                        monkeypatch):
  monkeypatch.setattr(initializer.global_config, "_credentials", expired)
  assert failed(lambda: command("list", None)) == (
      "Vertex AI: list of schedules failed: your credentials were refused or could not be "
      f"refreshed (invalid_grant: Token has been expired or revoked.): {SIGN_IN}")


def test_a_key_google_refuses_is_one_line_naming_how_to_sign_in(vp, monkeypatch):
  """REST's 401 is api_core's Unauthorized, not Unauthenticated (gRPC's)."""
  monkeypatch.setattr(initializer.global_config, "_credentials", key_credentials())
  message = failed(lambda: command("list", None))
  assert message.startswith("Vertex AI: list of schedules failed: your credentials were "
                            "refused or could not be refreshed ("), message
  assert message.endswith(SIGN_IN)


def test_expired_credentials_are_one_line_naming_how_to_sign_in_on_grpc(tmp_path, expired,
                                                                        monkeypatch):
  """aiplatform's default transport is gRPC, whose auth plugin turns the
  RefreshError into UNAVAILABLE, which the clients' default retry retries
  until its deadline, then raises RetryError (not a GoogleAPICallError): here
  Resource Manager's GetProject, on its stand-in, with a 1 s deadline, not 60."""
  from google.api_core import exceptions, retry
  from google.cloud import resourcemanager_v3
  manager = ResourceManager(str(tmp_path), PROJECT, NUMBER, TOKEN)
  for key, value in manager.env.items():
    monkeypatch.setenv(key, value)
  projects = resourcemanager_v3.ProjectsClient(credentials=expired)
  try:
    message = failed(lambda: _in_calls(lambda: projects.get_project(
        name=f"projects/{PROJECT}", retry=retry.Retry(
            predicate=retry.if_exception_type(exceptions.ServiceUnavailable), timeout=1))))
  finally:
    manager.close()
  assert message.startswith("Vertex AI: reading the project failed: your credentials were "
                            "refused or could not be refreshed ("), message
  assert "invalid_grant: Token has been expired or revoked." in message, message
  assert message.endswith(SIGN_IN)


def _in_calls(call):
  with vertex.calls("reading the project", PROJECT):
    call()


def test_an_unreachable_sign_in_is_one_line_not_a_traceback(vp, monkeypatch):
  """google-auth raises TransportError when the token endpoint cannot be
  reached (google/auth/transport/requests.py `Request.__call__`)."""
  monkeypatch.setattr(initializer.global_config, "_credentials",
                      user_credentials("http://127.0.0.1:9/token"))
  message = failed(lambda: command("list", None))
  assert message.startswith("Vertex AI: list of schedules failed: could not reach Google's "
                            "sign-in to refresh your credentials ("), message
  assert message.endswith("check this machine's network or proxy")


@pytest.mark.parametrize("service, name", [
    ("aiplatform.googleapis.com", "Vertex AI"),
    ("cloudresourcemanager.googleapis.com", "Cloud Resource Manager"),
    ("storage.googleapis.com", "Cloud Storage")])
def test_an_api_not_enabled_is_named_as_google_names_it(service, name):
  """Google's 403 for a disabled API, as its services word it (reason
  SERVICE_DISABLED, with the API's console link)."""
  from google.api_core import exceptions
  said = vertex.describe(exceptions.Forbidden(
      f"{name} API has not been used in project 123 before or it is disabled. Enable it by "
      f"visiting https://console.developers.google.com/apis/api/{service}/overview?project=123"
      " then retry."), "my-project")
  assert said == (f"the {name} API is not enabled in project my-project: gcloud services "
                  f"enable {service} --project my-project")


@pytest.mark.parametrize("region, host", [("us", "aiplatform.us.rep.googleapis.com"),
                                          ("global", "aiplatform.googleapis.com"),
                                          ("europe-west4", "europe-west4-aiplatform.googleapis.com")])
def test_the_runs_list_asks_the_host_aiplatform_names(monkeypatch, region, host):
  from google.cloud import aiplatform_v1
  monkeypatch.delenv("VERTEX_API_ENDPOINT", raising=False)
  monkeypatch.setattr(aiplatform_v1, "PipelineServiceClient", lambda **kwargs: kwargs)
  assert vertex.client(region)["client_options"] == {"api_endpoint": host}


def test_an_account_the_user_may_not_act_as_is_a_400_that_names_service_account_user(vp):
  """Vertex answers it 400 INVALID_ARGUMENT (googleapis/python-aiplatform#1073),
  as the stand-in does: the fix is still roles/iam.serviceAccountUser."""
  from google.api_core import exceptions
  from google.cloud import aiplatform_v1
  account = f"runner@{PROJECT}.iam.gserviceaccount.com"
  client = aiplatform_v1.PipelineServiceClient(
      credentials=Credentials(TOKEN), transport="rest",
      client_options={"api_endpoint": vp.endpoint})
  vp.forbidden.add("iam.serviceAccounts.actAs")
  try:
    with pytest.raises(exceptions.BadRequest) as refused:
      client.create_pipeline_job(parent=f"projects/{PROJECT}/locations/{REGION}",
                                 pipeline_job={"service_account": account})
  finally:
    vp.forbidden.discard("iam.serviceAccounts.actAs")
  said = vertex.describe(refused.value, PROJECT)
  assert said.startswith("you may not act as the run's service account (") and said.endswith(
      "): grant your account roles/iam.serviceAccountUser on it, or name another with "
      "--service-account"), said
  assert f"act as service_account: {account}" in said and "aiplatform.user" not in said

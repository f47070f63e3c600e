"""kubeflow/api/vertex.py against the STAND-IN Vertex AI Pipelines
(tests/fakes/vertex_pipelines.py, in this process's threads), through
google-cloud-aiplatform's own REST transport. (Its refusals' wording is
tests/unit/commands/kubeflow/test_runs.py's
test_what_vertex_refuses_is_one_line_naming_the_fix.)"""

import argparse

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import initializer
from google.oauth2.credentials import Credentials

from kubeflow.api import vertex
from tests.fakes import vertex_resources
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


@pytest.mark.parametrize("catchup", [True, False])
def test_resume_asks_vertex_for_catch_up_only_with_catchup(vp, catchup):
  """aiplatform's `resume(catch_up=True)` sends none (schedules.py@v1.165.1
  lines 120-133); the request's own field does (ResumeScheduleRequest.catch_up)."""
  schedule = paused(vp, "nightly")
  said = command("resume", "nightly", catchup)
  assert schedule["state"] == "ACTIVE"
  assert schedule["catchUp"] is catchup  # the stand-in keeps what the request asked
  assert said == ["resumed: nightly" + (", catching up the runs it missed" if catchup else "")]

"""trainer/jobs/vertex.py's run against the stand-in Vertex AI
(tests/fakes/vertex_api.py), its replicas short processes: what a busy API
does to the Trainer step. The CustomJob's body and placement are unit-tested
in tests/unit/trainer/jobs/test_vertex.py; real training replicas in
tests/e2e/test_train_workers.py."""

import subprocess
import sys

from tests.conftest import REPO
from tests.fakes import vertex_api

STEP = """
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
from trainer.jobs import vertex, vertex_calls
from trainer.jobs.job import Job
vertex.POLL_SECONDS, vertex_calls.FIRST_WAIT = 0.2, 0.05  # the test's pace, not Vertex's
vertex.run(Job("train-blips", ["python", "-c", "import time; time.sleep(3)"], 2,
               {"image": "i", "project": PROJECT, "region": REGION}))
"""


def test_the_trainer_step_rides_out_a_busy_api_and_starts_one_job(tmp_path):
  """Issue 72: one 503 or reset among the step's reads of its CustomJob
  failed the step while the job trained on. Here the create's answer is
  lost after the job was made, then reads answer 503, 429, a reset and
  500: the step watches the one job to its end and logs each blip. The
  step is a process of its own, as on Vertex: google-auth reads where its
  metadata server is when it is imported."""
  with vertex_api.StandInVertex(str(tmp_path)) as standin:
    standin.blips += [("create", "made, then reset"), ("get", 503), ("get", 429),
                      ("get", "reset"), ("get", 500)]
    code = STEP.replace("PROJECT", repr(vertex_api.PROJECT)).replace(
        "REGION", repr(vertex_api.REGION))
    step = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, env={**standin.base_env, **standin.env}, timeout=600)
    assert step.returncode == 0, step.stdout + step.stderr[-3000:]
    assert standin.blips == [], "the stand-in's blips were not all met"
    (made,) = standin.runs.values()
    assert made.job.state.name == "JOB_STATE_SUCCEEDED"
  lines = step.stdout.splitlines()
  blips = [line for line in lines if "trying again" in line]
  assert [line.split(": ", 2)[2].split(";")[0] for line in blips] == [
      "the connection was reset", "503 The service is currently unavailable.",
      "429 Resource has been exhausted (e.g. check quota).", "the connection was reset",
      "500 Internal error encountered."], lines
  assert any("reattached to CustomJob" in line for line in lines), lines

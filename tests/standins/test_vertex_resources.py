"""tests/fakes/vertex_resources.py names a job it was given no id for as
aiplatform names one: the pipeline's name and the submitting machine's
local time (google-cloud-aiplatform 1.165.1 `pipeline_jobs.py` lines 80-82,
`datetime.datetime.now()`), not UTC."""

import datetime
import time

from tests.fakes import vertex_resources


def test_a_generated_job_id_carries_local_time_as_aiplatforms_does(monkeypatch):
  monkeypatch.setenv("TZ", "Asia/Kolkata")  # +05:30: never UTC's hour
  time.tzset()
  try:
    before = datetime.datetime.now().strftime("%Y%m%d%H%M")
    made = vertex_resources.generated_id({"pipelineInfo": {"name": "Digits"}}, set())
    after = datetime.datetime.now().strftime("%Y%m%d%H%M")
  finally:
    monkeypatch.undo()
    time.tzset()
  assert made[len("digits-"):][:12] in (before, after), made

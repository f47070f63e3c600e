"""The digits pipeline compiled for Vertex AI Pipelines and run there with
the project's own commands: `compile --backend vertex`, `submit`,
`schedule` and `runs` (kubeflow/api/vertex.py), against the stand-in
Vertex AI (tests/fakes/vertex_pipelines.py) through the real aiplatform SDK.

The stand-in runs each step as Vertex feeds it: typed input artifacts,
outputs in Vertex's layout `<root>/<project number>/<job id>/<task>_<id>/`,
no launcher. Its one difference: TensorFlow's gs:// cannot be pointed at a
local server, so the steps get s3:// (moto) for each gs:// bucket; so the
`runs` command here reads the records from that s3:// root
(`--pipeline-root`), where a user's reads the job's gs:// root.
"""

import os
import re
import subprocess
import sys

import pytest
import yaml

from commands.kubeflow.cli import main as kubeflow
from tests.conftest import REPO
from tests.e2e.conftest import digits_in_bucket
from tests.e2e.test_kubeflow_steps import webhook
from tests.fakes.s3_server import env, read, s3_server
from tests.fakes.vertex_pipelines import StandInVertexPipelines

pytestmark = [pytest.mark.e2e, pytest.mark.long]

NUMBER, PROJECT, REGION = "123456789012", "user-project", "us-central1"
ACCOUNT = f"pipelines@{PROJECT}.iam.gserviceaccount.com"
WHERE = ["--project", PROJECT, "--region", REGION]


def command(vp, s3_env, *args, code: int = 0) -> str:
  """`python -m commands.kubeflow ARGS` in its own process, as a user runs it (the SDK's
  gRPC settings are read once, at its start: tests/fakes/vertex_pipelines.py);
  its output, and its error output when it is to fail."""
  base = {k: v for k, v in os.environ.items() if k != "GOOGLE_APPLICATION_CREDENTIALS"}
  done = subprocess.run([sys.executable, "-m", "commands.kubeflow", *args], cwd=REPO, text=True,
                        env={**base, **vp.env, **s3_env}, capture_output=True, timeout=900)
  assert done.returncode == code, done.stdout + done.stderr[-3000:]
  return done.stdout if code == 0 else done.stderr


def tasks(resource: dict) -> dict:
  return {t["taskName"]: t for t in resource["jobDetail"]["taskDetails"]}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
  root = tmp_path_factory.mktemp("vertex_pipelines")
  with s3_server(buckets=("pipelines", "data", "serving")) as (endpoint, s3), \
       webhook() as (hook, messages):
    raw = digits_in_bucket(root, s3, scheme="gs")
    (root / "digits.yaml").write_text(yaml.safe_dump(raw))
    assert kubeflow(["compile", "--backend", "vertex", "--dataset", str(root / "digits.yaml"),
                     "--image", "local/tfrecord-pipeline:test",
                     "--pipeline-root", "gs://pipelines/root", "--data-root", "gs://data/digits",
                     "--serving-dir", "gs://serving/digits", "--skip-data-check",
                     "--notify", hook, "--keep-runs", "1",
                     "--output-dir", str(root / "compiled")]) == 0
    spec = str(root / "compiled" / "pipeline.yaml")
    with StandInVertexPipelines(str(root / "vertex"), s3, env(endpoint), project=PROJECT,
                                project_number=NUMBER, region=REGION) as vp:
      submitted = command(vp, {}, "submit", "--spec", spec, *WHERE, "--train-steps", "100",
                          "--service-account", ACCOUNT, "--label", "team=vision")
      job_id = re.search(r"^run: (\S+)", submitted, re.M).group(1)
      state = vp.wait(job_id, timeout=1800)
      scheduled = command(vp, {}, "schedule", "--spec", spec, *WHERE, "--name", "nightly",
                          "--cron", "0 3 * * *", "--train-steps", "100")
      (schedule,) = vp.schedules
      second = vp.fire(schedule)
      blocked = vp.fire(schedule)  # while `second` is in flight: one run at a time
      # Its run from the cache is the stand-in's test's (test_vertex_pipelines_standin).
      vp.cancel(vp.jobs[second])
      second_state = vp.wait(second, timeout=600)
      listed = command(vp, env(endpoint), "runs", "--spec", spec, *WHERE,
                       "--pipeline-root", "s3://pipelines/root")
      vp.forbidden.add("aiplatform.pipelineJobs.create")
      refused = command(vp, {}, "submit", "--spec", spec, *WHERE, code=1)
      vp.forbidden.clear()
      job = vp.jobs[job_id].resource
      # A run that failed early has no report: test_a_submitted_run_... says why.
      report, summary = (read(s3, tasks(job)[step]["outputs"][key]["artifacts"][0]["uri"])
                         if tasks(job).get(step, {}).get("outputs") else None
                         for step, key in (("RunReport", "report"), ("Retention", "summary")))
      yield {"job_id": job_id, "state": state, "job": job, "submitted": submitted,
             "scheduled": scheduled, "second": second, "second_state": second_state,
             "listed": listed, "report": report, "summary": summary,
             "messages": list(messages), "refused": refused, "jobs": len(vp.jobs),
             "blocked": blocked,
             "served": sorted({o["Key"].split("/")[1] for o in s3.list_objects_v2(
                 Bucket="serving", Prefix="digits/").get("Contents", [])})}


def test_a_submitted_run_trains_and_pushes_a_model_on_vertex(ran):
  job = ran["job"]
  assert ran["state"] == "PIPELINE_STATE_SUCCEEDED", (job.get("error"), {
      n: t.get("error") for n, t in tasks(job).items() if t.get("error")})
  assert f"run: {ran['job_id']} " in ran["submitted"], ran["submitted"]
  assert job["serviceAccount"] == ACCOUNT and job["labels"]["team"] == "vision", job
  assert job["runtimeConfig"]["gcsOutputDirectory"] == "gs://pipelines/root"
  assert len(ran["served"]) == 1 and ran["served"][0].isdigit(), ran["served"]


def test_the_notice_posts_the_runs_outcome(ran):
  """Issue 57: on Vertex's layout the exit step found no run folder, posted
  nothing and exited 0."""
  texts = [m["text"] for m in ran["messages"]]
  assert texts[0].startswith(f"digits: run {ran['job_id']} SUCCEEDED; blessed ("), texts
  assert texts[0].endswith(f"pushed version {ran['served'][0]}"), texts


def test_the_report_names_each_steps_true_state(ran):
  """On Vertex's layout the report read no records: every step CACHED, the
  run "(not known)"."""
  states = dict(re.findall(r'data-node="([^"]+)" data-state="([^"]+)"', ran["report"]))
  assert "Trainer" in states and set(states.values()) == {"COMPLETE"}, states
  assert ran["job_id"] in ran["report"] and "(not known)" not in ran["report"]


def test_a_schedule_is_created_and_starts_one_run_at_a_time(ran):
  assert re.match(r"schedule created: nightly \(projects/\S+/schedules/\S+\), cron "
                  r"'0 3 \* \* \*', max concurrency 1", ran["scheduled"]), ran["scheduled"]
  assert ran["blocked"] is None, "the schedule started a second run while one was in flight"
  assert ran["second_state"] == "PIPELINE_STATE_CANCELLED", ran["second_state"]


def test_retention_finds_its_run_in_vertexs_layout(ran):
  assert (f"keeping the newest 1 of 1 runs, the lineage of 1 served version(s) "
          f"({ran['served'][0]})") in ran["summary"], ran["summary"]


def test_the_runs_list_shows_each_run_and_what_it_pushed(ran):
  lines = ran["listed"].splitlines()
  assert len(lines) == 2, lines
  assert ran["second"] in lines[0] and ran["job_id"] in lines[1], lines
  assert "\tCANCELLED\t" in lines[0], lines
  assert "\tSUCCEEDED\t" in lines[1] and f"pushed version {ran['served'][0]}" in lines[1], lines


def test_a_call_vertex_refuses_is_one_line_naming_the_fix(ran):
  refused = ran["refused"].strip()
  assert refused.startswith("error: Vertex AI: submitting the run failed: permission denied ("), \
      refused
  assert "aiplatform.pipelineJobs.create" in refused and "roles/aiplatform.user" in refused
  assert "\n" not in refused and "Traceback" not in refused, refused
  assert ran["jobs"] == 2, "a refused submit started a job"

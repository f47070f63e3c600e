"""The stand-in Vertex AI Pipelines (tests/fakes/vertex_pipelines.py) itself:
what the real aiplatform SDK gets back from it, and how it feeds a step.

The digits spec, compiled here for a gs:// root and cut to its first steps
(SpanWindow and ImportExampleGen, through the project's entrypoint) plus a
probe step that consumes ImportExampleGen's examples and records what it was
handed, is submitted with `aiplatform.PipelineJob(...).submit()` in a fresh
process, as a user's machine would: the outputs land in Vertex's layout, the
probe's input is typed and named as Vertex names artifacts, the step sees
the project number and a tenant project, not the user's. A schedule's run
takes the first run's outputs from the cache. The SDK reads the jobs back
(list, get) and meets Google's refusals (400 for an s3:// root, 403 for a
permission not granted).

Small specs of `python -c` steps cover what the digits cannot make happen:
a retried step with its backoff, the exit handler after a failure, a
cancelled job, and a list long enough to come in pages.
"""

import copy
import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

from commands.kubeflow.cli import main as kubeflow
from tests.conftest import REPO
from tests.e2e.conftest import digits_in_bucket
from tests.e2e.test_kubeflow_steps import first_steps
from tests.fakes.s3_server import env, s3_server
from tests.fakes.vertex_api import TOKEN
from tests.fakes.vertex_pipelines import StandInVertexPipelines

pytestmark = pytest.mark.e2e

NUMBER, PROJECT, REGION = "123456789012", "user-project", "us-central1"
ACCOUNT = f"pipelines@{PROJECT}.iam.gserviceaccount.com"
NETWORK = f"projects/{NUMBER}/global/networks/ml-vpc"

# What the user's machine runs: the real SDK, pointed at the stand-in.
CLIENT = """
import json, sys
from google.cloud import aiplatform
endpoint, spec, actions = sys.argv[1], sys.argv[2], sys.argv[3:]
aiplatform.init(project="%s", location="%s", api_endpoint=endpoint, api_transport="rest")
found = {}
def job(root="gs://pipelines/root"):
  return aiplatform.PipelineJob(display_name="digits-first-steps", template_path=spec,
      pipeline_root=root, parameter_values={"train_steps": "10"}, enable_caching=None,
      labels={"team": "vision"})
for action in actions:
  try:
    if action == "submit":
      submitted = job()
      submitted.submit(service_account="%s", network="%s")
      found["submitted"] = submitted.resource_name
      schedule = aiplatform.PipelineJobSchedule(pipeline_job=submitted, display_name="nightly")
      schedule.create(cron="0 3 * * *", max_concurrent_run_count=1)
      found["schedule"] = schedule.resource_name
    elif action == "s3-root":
      job("s3://pipelines/root").submit()
    elif action == "list":
      found["list"] = [(j.resource_name, j.state.name) for j in aiplatform.PipelineJob.list(
          filter='labels.team="vision"', order_by="create_time desc")]
      found["get"] = aiplatform.PipelineJob.get(found["list"][0][0]).state.name
      found["schedules"] = [s.resource_name for s in aiplatform.PipelineJobSchedule.list()]
  except Exception as e:
    found[action + "-error"] = f"{type(e).__name__}: {e}"
    found[action + "-details"] = [d.get("reason") for d in getattr(e, "details", [])]
print(json.dumps(found))
""" % (PROJECT, REGION, ACCOUNT, NETWORK)

# A step that records what it was handed, and writes no output.
PROBE = """
import json, os, sys
import google.auth
print("PROBE " + json.dumps({"input": json.loads(sys.argv[1]), "args": sys.argv[2:],
    "env": {k: v for k, v in os.environ.items() if k.startswith(("CLOUD_ML", "AIP_", "PROBE_"))},
    "project": google.auth.default()[1]}))
"""


def client(vp, spec: str, *actions: str) -> dict:
  base = {k: v for k, v in os.environ.items() if k != "GOOGLE_APPLICATION_CREDENTIALS"}
  done = subprocess.run([sys.executable, "-c", CLIENT, vp.endpoint, spec, *actions],
                        env={**base, **vp.env}, cwd=REPO, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True, timeout=600)
  assert done.returncode == 0, done.stdout[-3000:]
  return {**json.loads(done.stdout.splitlines()[-1]), "output": done.stdout}


def with_probe(path: str) -> str:
  """The cut spec, and a probe step that consumes ImportExampleGen's examples."""
  with open(path) as f:
    spec = yaml.safe_load(f)
  examples = spec["components"]["ImportExampleGen"]["outputDefinitions"]["artifacts"]["examples"]
  # As kubeflow/compile/train_job.py hands the Trainer its PipelineJob's
  # place: a constant that is Vertex's placeholder, through the command.
  spec["components"]["Probe"] = {"executorLabel": "Probe_executor", "inputDefinitions": {
      "artifacts": {"examples": copy.deepcopy(examples)},
      "parameters": {"project": {"parameterType": "STRING"},
                     "account": {"parameterType": "STRING"}}}}
  spec["deploymentSpec"]["executors"]["Probe_executor"] = {"container": {
      "image": "local/tfrecord-pipeline:test", "command": [
          "env", "PROBE_PROJECT={{$.inputs.parameters['project']}}",
          "PROBE_ACCOUNT={{$.inputs.parameters['account']}}", "python", "-c", PROBE],
      "args": ["{{$}}", "{{$.pipeline_google_cloud_project_id}}",
               "{{$.pipeline_google_cloud_location}}", "{{$.pipeline_job_resource_name}}"]}}
  spec["root"]["dag"]["tasks"]["Probe"] = {
      "componentRef": {"name": "Probe"}, "taskInfo": {"name": "Probe"},
      "dependentTasks": ["ImportExampleGen"], "inputs": {"artifacts": {"examples": {
          "taskOutputArtifact": {"producerTask": "ImportExampleGen",
                                 "outputArtifactKey": "examples"}}},
          "parameters": {
              "project": {"runtimeValue": {"constant": "{{$.pipeline_google_cloud_project_id}}"}},
              "account": {"runtimeValue": {"constant": "{{$.pipeline_service_account}}"}}}}}
  with open(path, "w") as f:
    yaml.safe_dump(spec, f)
  return path


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
  root = tmp_path_factory.mktemp("vertex_standin")
  with s3_server(buckets=("pipelines", "data")) as (endpoint, s3):
    raw = digits_in_bucket(root, s3, scheme="gs")
    (root / "digits.yaml").write_text(yaml.safe_dump(raw))
    # No AWS flag: the stand-in gives the steps the bucket's access.
    assert kubeflow(["compile", "--dataset", str(root / "digits.yaml"),
                     "--image", "local/tfrecord-pipeline:test",
                     "--pipeline-root", "gs://pipelines/root", "--data-root", "gs://data/digits",
                     "--skip-data-check", "--output-dir", str(root / "compiled")]) == 0
    spec = with_probe(first_steps(str(root / "compiled" / "pipeline.yaml"), root / "first.yaml"))
    with StandInVertexPipelines(str(root / "vertex"), s3, env(endpoint), project=PROJECT,
                                project_number=NUMBER, region=REGION) as vp:
      sent = client(vp, spec, "submit", "s3-root")
      job_id = sent["submitted"].rsplit("/", 1)[1]
      state = vp.wait(job_id, timeout=900)
      vp.forbidden.add("aiplatform.pipelineJobs.create")
      read = client(vp, spec, "list", "submit")
      vp.forbidden.clear()
      scheduled = vp.fire(sent["schedule"])
      scheduled_state = vp.wait(scheduled, timeout=900)
      objects = {o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(
          Bucket="pipelines") for o in page.get("Contents", [])}
      probe = probed(vp.jobs[job_id].log_dir)
      yield {"vp": vp, "sent": sent, "read": read, "job_id": job_id, "state": state,
             "job": vp.jobs[job_id].resource, "scheduled": vp.jobs[scheduled].resource,
             "scheduled_state": scheduled_state, "objects": objects, "probe": probe}


def probed(log_dir: str) -> dict:
  """What the probe step printed, or its log's end when it printed nothing."""
  path = os.path.join(log_dir, "Probe.log")
  text = open(path).read() if os.path.exists(path) else "(the probe never ran)"
  found = [line[6:] for line in text.splitlines() if line.startswith("PROBE ")]
  return json.loads(found[0]) if found else {"log": text[-3000:]}


def tasks(resource: dict) -> dict:
  return {t["taskName"]: t for t in resource["jobDetail"]["taskDetails"]}


def test_the_first_steps_run_in_vertex_layout(digits):
  job, job_id = digits["job"], digits["job_id"]
  assert digits["state"] == "PIPELINE_STATE_SUCCEEDED", (job.get("error"), {
      n: t.get("error") for n, t in tasks(job).items()})
  assert {n: t["state"] for n, t in tasks(job).items()} == {
      "SpanWindow": "SUCCEEDED", "ImportExampleGen": "SUCCEEDED", "Probe": "SUCCEEDED"}
  assert job["name"] == f"projects/{NUMBER}/locations/{REGION}/pipelineJobs/{job_id}"
  assert (job["serviceAccount"], job["network"]) == (ACCOUNT, NETWORK)
  assert job["runtimeConfig"]["gcsOutputDirectory"] == "gs://pipelines/root"  # as sent
  [examples] = tasks(job)["ImportExampleGen"]["outputs"]["examples"]["artifacts"]
  task_id = tasks(job)["ImportExampleGen"]["taskId"]
  assert examples["uri"] == (f"gs://pipelines/root/{NUMBER}/{job_id}/"
                             f"ImportExampleGen_{task_id}/examples"), examples["uri"]
  assert re.fullmatch(f"projects/{NUMBER}/locations/{REGION}/metadataStores/default/"
                      r"artifacts/\d+", examples["name"]), examples["name"]
  assert sorted(json.loads(examples["metadata"]["split_names"])) == ["eval_span1", "train_span1"]
  folder = f"root/{NUMBER}/{job_id}/ImportExampleGen_{task_id}/"
  assert folder + "executor_output.json" in digits["objects"], sorted(digits["objects"])[:20]
  assert any(k.startswith(folder + "examples/") for k in digits["objects"])
  assert not any("executor-logs" in k for k in digits["objects"])  # the open-source launcher's


def test_a_step_gets_typed_named_inputs_and_the_executor_output_file_on_the_mount(digits):
  given = digits["probe"]["input"]
  [examples] = given["inputs"]["artifacts"]["examples"]["artifacts"]
  [produced] = tasks(digits["job"])["ImportExampleGen"]["outputs"]["examples"]["artifacts"]
  assert examples["name"] == produced["name"]
  assert examples["type"]["instanceSchema"].startswith("title: tfx.Examples"), examples["type"]
  assert examples["uri"] == "s3://" + produced["uri"][len("gs://"):]  # the one substitution
  assert isinstance(examples["metadata"]["split_names"], str), examples["metadata"]
  probe_id = tasks(digits["job"])["Probe"]["taskId"]
  assert given["outputs"]["outputFile"].endswith(
      f"/s3/pipelines/root/{NUMBER}/{digits['job_id']}/Probe_{probe_id}/executor_output.json")


def test_a_step_knows_the_project_number_and_its_metadata_server_names_a_tenant(digits):
  probe = digits["probe"]
  # The project's number; its id and the job's service account only through
  # the pipeline's placeholders, in the command as the compiled Trainer has them.
  assert probe["env"] == {"CLOUD_ML_PROJECT_ID": NUMBER, "PROBE_PROJECT": PROJECT,
                          "PROBE_ACCOUNT": ACCOUNT}, probe["env"]
  assert probe["project"].endswith("-tp") and probe["project"] != PROJECT, probe["project"]
  assert probe["args"] == [PROJECT, REGION, digits["job"]["name"]]


def test_the_sdks_bucket_check_before_it_submits_is_answered(digits):
  """aiplatform looks the root's bucket up and checks it is the project's
  (Cloud Storage, then Resource Manager) before it creates a job, and only
  logs a failure: unanswered, that lookup costs 40-60 s here."""
  logged = "Error when trying to get or create a GCS bucket"
  first, _, then = digits["sent"]["output"].partition("Creating PipelineJob")
  assert logged not in first, first[-3000:]
  assert logged in then  # the s3:// root's, which aiplatform cannot look up


def test_the_sdk_lists_and_gets_jobs_and_schedules(digits):
  read, job = digits["read"], digits["job"]
  assert read["list"] == [[job["name"], "PIPELINE_STATE_SUCCEEDED"]], read["list"]
  assert read["get"] == "PIPELINE_STATE_SUCCEEDED", read
  assert read["schedules"] == [digits["sent"]["schedule"]]


def test_google_refusals_reach_the_sdk_as_google_words_them(digits):
  sent, read = digits["sent"], digits["read"]
  assert sent["s3-root-error"].startswith("BadRequest: 400"), sent
  assert "gcs_output_directory" in sent["s3-root-error"], sent
  # Over REST, api-core raises by the HTTP status (exceptions.py lines 530-537):
  # Forbidden, PermissionDenied's base, not PermissionDenied.
  assert read["submit-error"].startswith("Forbidden: 403"), read
  assert "'aiplatform.pipelineJobs.create'" in read["submit-error"], read
  assert read["submit-details"] == ["IAM_PERMISSION_DENIED"], read


def test_a_scheduled_run_is_the_schedules_and_takes_the_cache(digits):
  run = digits["scheduled"]
  assert digits["scheduled_state"] == "PIPELINE_STATE_SUCCEEDED", run.get("error")
  assert run["scheduleName"] == digits["sent"]["schedule"]
  assert run["labels"]["team"] == "vision" and "vertex-ai-pipelines-run-billing-id" in run["labels"]
  assert tasks(run)["ImportExampleGen"]["state"] == "SKIPPED"  # a cache hit, on Vertex
  assert tasks(run)["SpanWindow"]["state"] == "SUCCEEDED"  # compiled uncached


def step(script: str) -> dict:
  return {"container": {"image": "python:3.10", "command": ["python", "-c", script],
                        "args": ["{{$}}"]}}


def task(name: str, after=(), **more) -> dict:
  return {"componentRef": {"name": name}, "taskInfo": {"name": name},
          **({"dependentTasks": list(after)} if after else {}), **more}


def small_job(tasks: dict, dags: dict, scripts: dict) -> dict:
  """A PipelineJob as aiplatform sends it, of `python -c` steps."""
  components = {name: {"executorLabel": name} for name in scripts}
  components.update({name: {"dag": {"tasks": inner}} for name, inner in dags.items()})
  return {"displayName": "small", "runtimeConfig": {"gcsOutputDirectory": "gs://pipelines/r"},
          "pipelineSpec": {"pipelineInfo": {"name": "small"}, "schemaVersion": "2.1.0",
                           "root": {"dag": {"tasks": tasks}}, "components": components,
                           "deploymentSpec": {"executors": {
                               name: step(script) for name, script in scripts.items()}}}}


@pytest.fixture
def small(tmp_path):
  with s3_server(buckets=("pipelines",)) as (endpoint, s3):
    with StandInVertexPipelines(str(tmp_path), s3, env(endpoint), backoff_scale=0) as vp:
      yield vp


def test_a_failed_attempt_is_retried_after_its_backoff_and_the_exit_task_runs_after_a_failure(
    small, tmp_path):
  marker = tmp_path / "failed-once"
  flaky = (f"import os, sys\nif not os.path.exists({str(marker)!r}):\n"
           f"  open({str(marker)!r}, 'w').close(); sys.exit(3)")
  retry = {"maxRetryCount": 2, "backoffDuration": "30s", "backoffFactor": 2.0,
           "backoffMaxDuration": "3600s"}
  job = small_job(
      tasks={"exit-handler-1": task("exit-handler-1"),
             "notice": task("notice", ["exit-handler-1"],
                            triggerPolicy={"strategy": "ALL_UPSTREAM_TASKS_COMPLETED"})},
      dags={"exit-handler-1": {"flaky": task("flaky", retryPolicy=retry),
                               "boom": task("boom", ["flaky"]), "after": task("after", ["boom"])}},
      scripts={"flaky": flaky, "boom": "import sys; sys.exit(1)", "after": "", "notice": ""})
  job_id = small.create_job(job, "small-1").id
  assert small.wait(job_id, 300) == "PIPELINE_STATE_FAILED"
  resource = small.jobs[job_id].resource
  states = {n: t["state"] for n, t in tasks(resource).items()}
  assert states == {"flaky": "SUCCEEDED", "boom": "FAILED", "after": "NOT_TRIGGERED",
                    "exit-handler-1": "FAILED", "notice": "SUCCEEDED"}, states
  flaky_task = tasks(resource)["flaky"]["executorDetail"]["containerDetail"]
  assert len(flaky_task["failedMainJobs"]) == 1 and flaky_task["mainJob"] not in \
      flaky_task["failedMainJobs"], flaky_task
  # Vertex's backoff: 30 s before the first retry (the next would be 60 s).
  assert small.jobs[job_id].run.tasks["flaky"].waits == [30.0]
  assert "[boom]" in resource["error"]["message"], resource["error"]


def test_a_cancelled_job_stops_its_running_step_and_starts_no_other(small):
  job = small_job(tasks={"slow": task("slow"), "later": task("later", ["slow"])}, dags={},
                  scripts={"slow": "import time; time.sleep(120)", "later": ""})
  job_id = small.create_job(job, "small-2").id
  run = small.jobs[job_id].run
  for _ in range(300):
    if "slow" in run.tasks and run.tasks["slow"].main_job:
      break
    time.sleep(0.1)
  small.cancel(small.jobs[job_id])
  assert small.jobs[job_id].state == "PIPELINE_STATE_CANCELLING"
  assert small.wait(job_id, 60) == "PIPELINE_STATE_CANCELLED"
  resource = small.jobs[job_id].resource
  assert {n: t["state"] for n, t in tasks(resource).items()} == {
      "slow": "CANCELLED", "later": "CANCELLED"}
  assert resource["error"]["code"] == 1  # Code.CANCELLED


def test_a_list_comes_in_pages_newest_first_without_job_details(small):
  ids = [small.create_job(small_job({"noop": task("noop")}, {}, {"noop": ""}), f"page-{n}").id
         for n in range(7)]
  for job_id in ids:
    small.wait(job_id, 60)
  service = aiplatform_v1.PipelineServiceClient(
      credentials=Credentials(TOKEN), transport="rest",
      client_options={"api_endpoint": small.endpoint})
  parent = f"projects/{PROJECT}/locations/{REGION}"
  pager = service.list_pipeline_jobs(request={"parent": parent, "filter": 'display_name="small"'})
  pages = list(pager.pages)
  assert [len(p.pipeline_jobs) for p in pages] == [5, 2]  # the pager follows nextPageToken
  listed = [job.name.rsplit("/", 1)[1] for p in pages for job in p.pipeline_jobs]
  assert listed == ids[::-1]  # "create time in descending order"
  assert not any(job.job_detail.task_details for p in pages for job in p.pipeline_jobs)
  got = service.get_pipeline_job(name=f"{parent}/pipelineJobs/{ids[0]}")
  assert [t.task_name for t in got.job_detail.task_details] == ["noop"]
  assert got.state == aiplatform_v1.PipelineState.PIPELINE_STATE_SUCCEEDED


def test_a_paused_schedule_starts_no_run_and_a_deleted_one_is_gone(small):
  service = aiplatform_v1.ScheduleServiceClient(
      credentials=Credentials(TOKEN), transport="rest",
      client_options={"api_endpoint": small.endpoint})
  parent = f"projects/{PROJECT}/locations/{REGION}"
  job = small_job({"noop": task("noop")}, {}, {"noop": ""})
  schedule = service.create_schedule(parent=parent, schedule=aiplatform_v1.Schedule.from_json(
      json.dumps({"displayName": "nightly", "cron": "0 3 * * *", "maxConcurrentRunCount": "1",
                  "createPipelineJobRequest": {"parent": parent, "pipelineJob": job}})))
  assert schedule.name.startswith(f"projects/{NUMBER}/locations/{REGION}/schedules/")
  service.pause_schedule(name=schedule.name)
  assert service.get_schedule(name=schedule.name).state == aiplatform_v1.Schedule.State.PAUSED
  assert small.fire(schedule.name) is None
  service.resume_schedule(name=schedule.name)
  run = small.fire(schedule.name)
  assert small.wait(run, 60) == "PIPELINE_STATE_SUCCEEDED"
  assert small.jobs[run].resource["displayName"] == "small"  # the request's
  assert service.get_schedule(name=schedule.name).started_run_count == 1
  service.delete_schedule(name=schedule.name).result(timeout=30)
  assert list(service.list_schedules(parent=parent)) == []

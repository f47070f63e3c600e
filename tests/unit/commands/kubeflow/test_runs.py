"""submit, schedule and schedules against a STAND-IN Kubeflow Pipelines API.

tests/fakes/kfp_server.py implements the v2beta1 REST calls these commands make
and checks every request body against kfp-server-api's models. This is a
contract test of what we send and how we react, not a cluster test.
"""

import argparse
import json

import pytest

from commands.kubeflow.cli import main as kubeflow
from kubeflow.api import schedules
from runtime import kube
from tests.conftest import compile_digits_spec, span_declaration
from tests.fakes import kfp_server


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
  return compile_digits_spec(tmp_path_factory.mktemp("kfp_spec"))


@pytest.fixture
def server():
  url, state, stop = kfp_server.serve()
  yield url, state
  stop()


def run(*args):
  return kubeflow(list(args))


def test_submit_uploads_and_starts_one_run_with_runtime_parameters(spec, server, capsys):
  url, state = server
  assert run("submit", "--spec", spec, "--host", url, "--train-steps", "50",
             "--data-root", "gs://b/new", "--serving-dir", "gs://b/serve") == 0
  assert "run: " in capsys.readouterr().out
  (the_run,) = state.runs.values()
  params = the_run["runtime_config"]["parameters"]
  assert params["data_root"] == "gs://b/new"
  assert json.loads(params["train_args"]) == {"num_steps": 50}
  assert params["serving_dir"] == "gs://b/serve"
  assert [p["display_name"] for p in state.pipelines.values()] == ["digits"]
  assert [e["display_name"] for e in state.experiments.values()] == ["digits"]
  # The backend never reads the spec's root: the run carries it.
  assert the_run["runtime_config"]["pipeline_root"] == "gs://b/p", the_run["runtime_config"]
  # A second submit adds a version to the same pipeline.
  assert run("submit", "--spec", spec, "--host", url, "--pipeline-root", "s3://x/y") == 0
  assert len(state.pipelines) == 1 and len(state.versions) == 2 and len(state.runs) == 2
  assert {r["runtime_config"]["pipeline_root"] for r in state.runs.values()} == {
      "gs://b/p", "s3://x/y"}


def test_a_root_tensorflow_cannot_open_is_refused_before_anything_is_sent(
    spec, server, capsys):
  url, state = server
  assert run("submit", "--spec", spec, "--host", url,
             "--pipeline-root", "minio://mlpipeline/v2/artifacts") == 2
  err = capsys.readouterr().err
  assert "--pipeline-root minio://mlpipeline/v2/artifacts" in err and "s3://" in err, err
  assert state.runs == {} and state.pipelines == {}


def test_schedule_twice_with_one_name_updates_instead_of_duplicating(spec, server, capsys):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "0 3 * * *") == 0
  assert "schedule created: nightly" in capsys.readouterr().out
  (first,) = state.recurring_runs.values()
  assert first["trigger"]["cron_schedule"]["cron"] == "0 0 3 * * *"
  assert int(first["max_concurrency"]) == 1 and first["no_catchup"] is True
  assert first["status"] == "ENABLED"
  assert first["runtime_config"]["pipeline_root"] == "gs://b/p", first["runtime_config"]
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "0 4 * * *", "--train-steps", "99") == 0
  assert "schedule updated: nightly" in capsys.readouterr().out
  (second,) = state.recurring_runs.values()
  assert second["recurring_run_id"] != first["recurring_run_id"]
  assert second["trigger"]["cron_schedule"]["cron"] == "0 0 4 * * *"
  assert json.loads(second["runtime_config"]["parameters"]["train_args"]) == {"num_steps": 99}


def test_schedules_list_pause_resume_delete(spec, server, capsys):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "@daily") == 0
  capsys.readouterr()
  common = ["--host", url, "--experiment", "digits"]
  assert run("schedules", "list", *common) == 0
  assert capsys.readouterr().out.startswith("nightly\tENABLED\t@daily")
  assert run("schedules", "pause", "nightly", *common) == 0
  assert [r["status"] for r in state.recurring_runs.values()] == ["DISABLED"]
  assert run("schedules", "resume", "nightly", *common) == 0
  assert [r["status"] for r in state.recurring_runs.values()] == ["ENABLED"]
  assert run("schedules", "delete", "nightly", *common) == 0
  assert state.recurring_runs == {}
  assert run("schedules", "pause", "nightly", *common) == 1
  assert "no schedule named 'nightly'" in capsys.readouterr().err


def test_a_failed_schedule_update_restores_the_old_one_and_uploads_nothing(spec, server, capsys):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "0 3 * * *") == 0
  (old,) = state.recurring_runs.values()
  versions = dict(state.versions)
  state.fail["POST /apis/v2beta1/recurringruns"] = 500
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "0 5 * * *") == 1
  err = capsys.readouterr().err
  assert "error: creating the schedule 'nightly' failed: HTTP 500" in err
  assert "Traceback" not in err
  assert list(state.recurring_runs.values()) == [old] and old["status"] == "ENABLED"
  assert state.versions == versions


def test_a_failed_run_leaves_no_uploaded_pipeline(spec, server, capsys):
  url, state = server
  state.fail["POST /apis/v2beta1/runs"] = 500
  assert run("submit", "--spec", spec, "--host", url) == 1
  assert "creating the run failed" in capsys.readouterr().err
  assert state.pipelines == {} and state.versions == {}


def test_a_refused_clean_up_is_a_second_line_after_the_first_error(spec, server, capsys):
  """As a multi-user 2.17 server refuses a profile's user the delete of a
  shared pipeline's version: the run's own error still comes first."""
  url, state = server
  state.fail["POST /apis/v2beta1/runs"] = 500
  state.fail["DELETE /apis/v2beta1/pipelines/"] = 403
  assert run("submit", "--spec", spec, "--host", url) == 1
  err = capsys.readouterr().err.splitlines()
  assert err[0].startswith("error: creating the run failed: HTTP 500"), err
  assert err[1].startswith("also: deleting the uploaded pipeline version "), err
  assert "failed: HTTP 403" in err[1] and "Traceback" not in "\n".join(err), err
  assert len(state.versions) == 1, "the version the refused delete left"


def test_unknown_runtime_parameter_is_refused_by_the_server_contract(spec, server, capsys):
  url, state = server
  assert run("submit", "--spec", spec, "--host", url, "--param", "epochs=3") == 1
  assert "parameters not declared by the pipeline: ['epochs']" in capsys.readouterr().err
  assert state.versions == {}


@pytest.mark.parametrize("expression", ["0 3 * *", "61 * * * *", "0 3 * * MOON",
                                        "*/0 * * * *", "5-1 * * * *"])
def test_malformed_cron_is_one_line_and_nothing_is_sent(spec, server, capsys, expression):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "n",
             "--cron", expression) == 2
  err = capsys.readouterr().err
  assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
  assert state.requests == []


def test_rejected_token_is_one_line(spec, server, capsys):
  url, state = server
  state.token = "s3cret"
  assert run("submit", "--spec", spec, "--host", url, "--token", "wrong") == 1
  err = capsys.readouterr().err
  assert "rejected the credentials (HTTP 401)" in err and "Traceback" not in err
  assert state.versions == {}
  assert run("submit", "--spec", spec, "--host", url, "--token", "s3cret") == 0


def test_unreachable_endpoint_is_one_line(spec, capsys):
  url, _, stop = kfp_server.serve()
  stop()
  assert run("submit", "--spec", spec, "--host", url) == 1
  err = capsys.readouterr().err
  assert err.strip() == f"error: cannot reach Kubeflow Pipelines at {url}: ConnectionError"


def test_cron_normalize():
  assert schedules.normalize("0 3 * * *") == "0 0 3 * * *"
  assert schedules.normalize("0 0 3 * * MON-FRI") == "0 0 3 * * MON-FRI"
  assert schedules.normalize("@every 6h") == "@every 6h"
  with pytest.raises(schedules.CronError, match="hour: expected a number in \\[0, 23\\]"):
    schedules.normalize("0 24 * * *")


def test_cron_for_vertex_is_five_fields_and_keeps_its_time_zone():
  """Vertex's Schedule.cron is five fields: Kubeflow's six (seconds first)
  would be sent as a different schedule, or refused."""
  assert schedules.for_vertex("0 3 * * *") == "0 3 * * *"
  assert schedules.for_vertex("TZ=Europe/Berlin 0 3 * * 1-5") == "TZ=Europe/Berlin 0 3 * * 1-5"
  assert schedules.for_vertex("@daily") == "0 0 * * *"
  assert schedules.for_vertex("0 0 3 * * *") == "0 3 * * *"
  for kubeflow_only in ("@every 6h", "30 0 3 * * *"):
    with pytest.raises(schedules.CronError, match="as Vertex AI takes them"):
      schedules.for_vertex(kubeflow_only)


def test_a_misspelt_time_zone_stops_before_anything_is_sent_to_vertex():
  """Vertex takes IANA names only; the misspelling would reach its API."""
  with pytest.raises(schedules.CronError) as refused:
    schedules.for_vertex("TZ=Europe/Berln 0 3 * * *")
  assert str(refused.value) == (
      "time zone 'Europe/Berln' in 'TZ=Europe/Berln 0 3 * * *': expected a name of the "
      "IANA time zone database such as Europe/Berlin (did you mean Europe/Berlin?)")
  assert schedules.for_vertex("CRON_TZ=America/New_York 0 3 * * *").startswith("CRON_TZ=")


def test_a_refused_schedules_call_is_one_line(spec, server, capsys):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "@daily") == 0
  capsys.readouterr()
  state.fail["POST /apis/v2beta1/recurringruns/"] = 503
  assert run("schedules", "pause", "nightly", "--host", url, "--experiment", "digits") == 1
  err = capsys.readouterr().err
  assert err.startswith("error: Kubeflow refused the request: HTTP 503") and "Traceback" not in err
  assert [r["status"] for r in state.recurring_runs.values()] == ["ENABLED"]


def test_a_span_pipeline_is_submitted_and_scheduled_with_the_flags_alone(
    tmp_path, server):
  """Its first step finds the window, so submit lists nothing and a
  recurring run can start it (each run finds the newest spans itself)."""
  url, state = server
  path, root = span_declaration(tmp_path, spans=(1, 2), window=2)
  assert run("compile", "--image", "r/i:1", "--pipeline-root", "gs://b/p",
             "--dataset", str(path), "--pipeline-name", "spans", "--skip-data-check",
             "--data-root", str(root), "--output-dir", str(tmp_path / "out")) == 0
  spec = str(tmp_path / "out" / "pipeline.yaml")
  assert run("submit", "--spec", spec, "--host", url, "--train-steps", "50",
             "--serving-dir", "gs://b/serving") == 0
  (the_run,) = state.runs.values()
  params = the_run["runtime_config"]["parameters"]
  # Who started it, for the model card.
  assert params.pop("scheduled_by").startswith("python -m commands.kubeflow submit, by "), params
  assert params == {"train_steps": "50", "serving_dir": "gs://b/serving"}
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "0 3 * * *") == 0
  (recurring,) = state.recurring_runs.values()
  assert recurring["runtime_config"]["parameters"]["scheduled_by"].startswith(
      "recurring run nightly (0 3 * * *), scheduled by "), recurring["runtime_config"]
  assert set(recurring["runtime_config"]["parameters"]) == {"scheduled_by"}


def test_schedule_with_notify_uploads_the_spec_with_the_exit_step(spec, server, capsys):
  url, state = server
  assert run("schedule", "--spec", spec, "--host", url, "--name", "nightly",
             "--cron", "@daily", "--notify", "http://127.0.0.1:9/hook") == 0
  (version,) = state.versions.values()
  uploaded = version["pipeline_spec"]
  assert set(uploaded["root"]["dag"]["tasks"]) == {"exit-handler-1", "notify"}
  assert uploaded["root"]["inputDefinitions"]["parameters"]["notify_url"][
      "defaultValue"] == "http://127.0.0.1:9/hook"
  with open(spec) as f:
    assert "notify" not in f.read(), "the compiled file itself must stay as it was"


def test_submit_with_final_status_uploads_the_exit_step_taking_kubeflows_state(
    spec, server, capsys):
  """For a 2.14+ install: the exit step takes the run's final status."""
  url, state = server
  assert run("submit", "--spec", spec, "--host", url, "--notify", "http://127.0.0.1:9/hook",
             "--final-status") == 0, capsys.readouterr().err
  (version,) = state.versions.values()
  notice = version["pipeline_spec"]["root"]["dag"]["tasks"]["notify"]
  assert notice["inputs"]["parameters"]["status"] == {
      "taskFinalStatus": {"producerTask": "exit-handler-1"}}, notice["inputs"]
  assert run("submit", "--spec", spec, "--host", url, "--final-status") == 2
  assert "--final-status: expected --notify URL too" in capsys.readouterr().err
  assert len(state.versions) == 1, "a refused --final-status uploaded something"


def test_runs_lists_state_and_what_each_finished_run_pushed(tmp_path, server, capsys):
  """The steps' records (kubeflow/steps/records.py) under a pipeline root on
  this machine's disk; on a cluster it is a bucket."""
  from kubeflow.steps import records as step_records
  spec_path = compile_digits_spec(tmp_path / "c", "--pipeline-root", str(tmp_path / "root"))
  url, state = server
  submitted = []
  for _ in range(4):
    before = set(state.runs)
    assert run("submit", "--spec", spec_path, "--host", url) == 0
    submitted += list(set(state.runs) - before)
  pushed, failed, running, refused = submitted
  for run_id, run_state in ((pushed, "SUCCEEDED"), (failed, "FAILED"),
                            (running, "RUNNING"), (refused, "SUCCEEDED")):
    state.runs[run_id]["state"] = run_state
  root = tmp_path / "root" / "digits"
  step_records.write(str(root / refused), "Evaluator", step_records.COMPLETE,
                    outputs={"blessing": {"metadata": {"blessed": 1}}})
  step_records.write(str(root / refused), "ServingCheck", step_records.COMPLETE,
                    outputs={"infra_blessing": {"metadata": {
                        "blessed": 0, "checked": 1,
                        "reason": "finite: probabilities: NaN or infinity for 3 of 256 "
                                  "examples"}}})
  step_records.write(str(root / refused), "Pusher", step_records.COMPLETE,
                    outputs={"pushed_model": {"metadata": {"pushed": 0}}})
  step_records.write(str(root / pushed), "Pusher", step_records.COMPLETE,
                    outputs={"pushed_model": {"metadata": {"pushed": 1,
                                                           "pushed_version": "1764000000"}}})
  step_records.write(str(root / failed), "Trainer", step_records.FAILED,
                    message="ValueError: labels out of range")
  capsys.readouterr()
  assert run("runs", "--spec", spec_path, "--host", url) == 0
  lines = capsys.readouterr().out.strip().splitlines()
  assert len(lines) == 4, lines
  by_id = {line.split("\t")[3]: line for line in lines}
  assert "\tSUCCEEDED\t" in by_id[pushed] and by_id[pushed].endswith(
      "pushed version 1764000000"), by_id[pushed]
  assert by_id[failed].endswith("failed at Trainer: ValueError: labels out of range; "
                                "nothing pushed"), by_id[failed]
  assert by_id[running].split("\t")[1] == "RUNNING", by_id[running]
  assert by_id[refused].endswith(
      "not pushed: serving check failed (finite: probabilities: NaN or infinity for 3 "
      "of 256 examples)"), by_id[refused]
  assert lines[0] == by_id[refused], "expected the newest run first"


@pytest.mark.parametrize("configmap", [True, False], ids=["configmap-root", "no-configmap"])
def test_runs_finds_a_run_that_named_no_root_where_the_backend_put_it(
    tmp_path, server, capsys, monkeypatch, configmap):
  """A run started without a root (from the UI with the field cleared, or by
  an older client) writes under the namespace's kfp-launcher default
  (tests/fakes/kfp_backend.py root_of); `runs` reads that ConfigMap with
  the user's kubeconfig, here a stand-in Kubernetes API."""
  from kubeflow.steps import records as step_records
  from tests.fakes import kubernetes_api
  spec_path = compile_digits_spec(tmp_path / "c", "--pipeline-root", str(tmp_path / "root"))
  url, state = server
  assert run("submit", "--spec", spec_path, "--host", url) == 0
  (run_id,) = state.runs
  state.runs[run_id].update(state="SUCCEEDED", runtime_config={"parameters": {}})
  admin_root = tmp_path / "admin-root"
  step_records.write(str(admin_root / "digits" / run_id), "Pusher", step_records.COMPLETE,
                     outputs={"pushed_model": {"metadata": {"pushed": 1,
                                                            "pushed_version": "1764000001"}}})
  store = kubernetes_api.Store({"configmaps"})
  if configmap:
    store.create(("v1", "team-a", "configmaps", "kfp-launcher"),
                 {"data": {"defaultPipelineRoot": str(admin_root)}})
  api = kubernetes_api.serve(store)
  try:
    (tmp_path / "kubeconfig").write_text(kubernetes_api.kubeconfig(api, "team-a"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    capsys.readouterr()
    assert run("runs", "--spec", spec_path, "--host", url, "--namespace", "team-a") == 0
  finally:
    api.shutdown()
  (line,) = capsys.readouterr().out.strip().splitlines()
  if configmap:
    assert line.endswith("pushed version 1764000001"), line
  else:
    assert "minio://mlpipeline/v2/artifacts/digits/" + run_id in line, line


@pytest.mark.parametrize("text", ["", "not: [a, pipeline", "just: a mapping\n"])
def test_a_file_that_is_not_a_compiled_spec_is_one_line_naming_it(tmp_path, text):
  import argparse

  from commands.kubeflow import runs
  path = tmp_path / "pipeline.yaml"
  path.write_text(text)
  with pytest.raises(argparse.ArgumentTypeError) as e:
    runs.load_spec(str(path))
  assert str(e.value).startswith(f"--spec {path}: expected a pipeline spec written by "
                                 "'compile', found "), str(e.value)


def test_runtime_parameters_take_the_form_the_compiled_pipeline_declares():
  from kubeflow.api import client
  spans = {"train_steps": {}, "scheduled_by": {}}
  assert client.runtime_params(train_steps=50, serving_dir="s3://serving/d",
                               declared=spans, scheduled_by="cron") == {
      "train_steps": "50", "serving_dir": "s3://serving/d", "scheduled_by": "cron"}
  # A pipeline without spans takes TFX's TrainArgs; one compiled before the
  # serving dir was a string takes a PushDestination.
  assert client.runtime_params(train_steps=50, serving_dir="gs://b/s",
                               declared={"push_destination": {}}) == {
      "train_args": '{"num_steps": 50}',
      "push_destination": '{"filesystem": {"base_directory": "gs://b/s"}}'}


def test_what_vertex_refuses_is_one_line_naming_the_fix():
  """kubeflow/api/vertex.py `describe`, on the errors the REST transport
  raises (classed by HTTP status: google/api_core/exceptions.py)."""
  from google.api_core import exceptions

  from kubeflow.api import vertex
  disabled = exceptions.Forbidden(
      "Vertex AI API has not been used in project my-project before or it is disabled.")
  assert vertex.describe(disabled, "my-project") == (
      "the Vertex AI API is not enabled in project my-project: gcloud services enable "
      "aiplatform.googleapis.com --project my-project")
  denied = vertex.describe(exceptions.Forbidden(
      "Permission 'aiplatform.pipelineJobs.create' denied"), "my-project")
  assert denied.startswith("permission denied (Permission 'aiplatform.pipelineJobs.create'")
  assert "roles/aiplatform.user" in denied and "roles/iam.serviceAccountUser" in denied
  missing = vertex.describe(exceptions.NotFound("bucket gs://nope does not exist"), "p")
  assert "check --project, --region and the pipeline root's bucket" in missing, missing
  assert "\n" not in denied + missing


@pytest.mark.parametrize("flag, uri, expected", [
    ("--data-root", "s3://data/digits", "expects gs:// (its steps reach Google Cloud"),
    ("--serving-dir", "/home/me/serving", "expects gs:// or /gcs/ (its steps run in Google"),
    ("--pipeline-root", "s3://b/root", "expects a Cloud Storage URI (gs://BUCKET/PATH)")])
def test_a_vertex_run_given_a_place_its_steps_cannot_reach_is_refused_before_any_call(
    spec, tmp_path, capsys, flag, uri, expected):
  vertex_spec = tmp_path / "pipeline.yaml"
  with open(spec) as f:  # the spec as `compile --backend vertex` marks it
    vertex_spec.write_text("# backend: vertex\n" + f.read())
  for command in (["submit"], ["schedule", "--name", "nightly", "--cron", "0 3 * * *"]):
    # No project, region or credentials are needed to be refused.
    assert run(*command, "--spec", str(vertex_spec), flag, uri) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {flag} {uri}: Vertex AI Pipelines "
                                               f"{expected}"), err


def test_a_spec_compiled_for_kubeflow_is_not_sent_to_vertex(spec, capsys):
  """compile --backend vertex checks what a Vertex step cannot take (roots,
  serving dir, --kserve, TFJob/TrainJob engines); a Kubeflow spec was never
  checked so. No project, region or credentials are needed to be refused."""
  for command in (["submit"], ["schedule", "--name", "nightly", "--cron", "0 3 * * *"]):
    assert run(*command, "--spec", spec, "--backend", "vertex") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --spec {spec}: --backend vertex expects a spec compiled for "
                   "Vertex AI, found one compiled for kubeflow: compile it with `compile "
                   "--backend vertex`"], err


def test_a_vertex_root_in_a_missing_bucket_stops_submit_and_schedule_before_the_sdk(
    spec, tmp_path, capsys, monkeypatch):
  """aiplatform's submit would create the bucket (gcs_utils.py@v1.165.1 lines
  357-379): submit and schedule check it first (kubeflow/api/vertex_bucket.py,
  whose tests cover the other cases) and send nothing."""
  from google.auth.credentials import AnonymousCredentials
  from google.cloud import aiplatform
  from google.cloud.aiplatform import initializer

  from kubeflow.api import google_cloud, vertex
  from tests.fakes.google_storage import StorageServer
  vertex_spec = tmp_path / "pipeline.yaml"
  with open(spec) as f:
    vertex_spec.write_text("# backend: vertex\n" + f.read())
  server = StorageServer(type("NoBuckets", (), {"list_buckets": lambda _: {"Buckets": []}})(),
                         "123456789012", {})
  monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.env["STORAGE_EMULATOR_HOST"])
  for kept, value in (("_credentials", AnonymousCredentials()), ("_project", "my-project"),
                      ("_location", "us-central1")):  # as connect() sets them
    monkeypatch.setattr(initializer.global_config, kept, value)
  monkeypatch.setattr(google_cloud, "connect", lambda project, region: ("my-project",
                                                                        "us-central1"))
  sent = []
  monkeypatch.setattr(aiplatform.PipelineJob, "submit", lambda *a, **k: sent.append("submit"))
  monkeypatch.setattr(vertex, "schedules", lambda *a: sent.append("schedules list") or [])
  try:
    for command in (["submit"], ["schedule", "--name", "nightly", "--cron", "0 3 * * *"]):
      assert run(*command, "--spec", str(vertex_spec), "--pipeline-root",
                 "gs://my-rusn/p") == 1
      err = capsys.readouterr().err.strip().splitlines()
      assert err == ["error: --pipeline-root gs://my-rusn/p: expected a bucket of project "
                     "my-project, found no bucket gs://my-rusn: create it with `gsutil mb -p "
                     "my-project -l us-central1 gs://my-rusn`, or give --pipeline-root a "
                     "bucket of project my-project"], err
  finally:
    server.close()
  assert sent == []


@pytest.mark.parametrize("command, expected", [
    (["schedule", "--name", "nightly", "--cron", "0 3 * * *", "--catchup"],
     "--catchup: Vertex AI takes no catch-up when a schedule is created; it starts the runs "
     "a paused schedule missed only if asked when resuming it: `schedules resume nightly "
     "--catchup --backend vertex`"),
    (["schedules", "pause", "nightly", "--backend", "vertex", "--catchup"],
     "--catchup: not taken by `schedules pause` (Vertex AI takes it on resume only)"),
    (["schedules", "resume", "nightly", "--catchup"],
     "--catchup: not taken by `schedules resume` (Kubeflow takes it when the schedule is "
     "made: `schedule --catchup`)")])
def test_catchup_where_the_backend_cannot_take_it_is_one_line_before_any_call(
    spec, tmp_path, capsys, command, expected):
  """Vertex's Schedule.catch_up is output only; its ResumeScheduleRequest
  takes one (aiplatform_v1 schedule.py line 134, schedule_service.py
  248-255). No project, region or credentials are needed to be refused."""
  vertex_spec = tmp_path / "pipeline.yaml"
  with open(spec) as f:
    vertex_spec.write_text("# backend: vertex\n" + f.read())
  if command[0] == "schedule":
    command += ["--spec", str(vertex_spec)]
  assert run(*command) == 2
  assert capsys.readouterr().err.strip().splitlines() == [f"error: {expected}"]


def test_a_vertex_label_or_network_of_the_wrong_form_is_refused_before_any_call():
  from kubeflow.api import vertex
  assert vertex.labels(["team=vision", "cost-center=42"]) == {"team": "vision",
                                                              "cost-center": "42"}
  for bad in ("Team=vision", "team", f"{vertex.BILLING_LABEL}=x"):
    with pytest.raises(argparse.ArgumentTypeError, match="--label"):
      vertex.labels([bad])
  args = argparse.Namespace(network="my-vpc", spec="s", project="p", label=None)
  with pytest.raises(argparse.ArgumentTypeError, match="projects/NUMBER/global/networks"):
    vertex.pipeline_job(args, "s", "run", "gs://b/r", {})


TEAM_A = "team-a-token"  # a bearer token of team-a's default-editor


@pytest.fixture
def multi_user(monkeypatch, tmp_path):
  """The stand-in as a multi-user 2.17 API server, whose one user may act
  in team-a only; this machine is no pod (no namespace of its own)."""
  monkeypatch.setattr(kube, "NAMESPACE_FILE", str(tmp_path / "no-pod"))
  url, state, stop = kfp_server.serve(multi_user=True, version=(2, 17))
  state.users[TEAM_A] = ("system:serviceaccount:team-a:default-editor", {"team-a"})
  yield url, state
  stop()


def test_submit_with_a_namespace_puts_the_pipeline_and_the_run_in_it(spec, multi_user, capsys):
  """A multi-user server takes the run's namespace from its experiment; the
  pipeline goes in the namespace too, so another namespace's `digits`
  never takes its versions."""
  url, state = multi_user
  state.pipelines["shared"] = {"pipeline_id": "shared", "display_name": "digits"}
  for _ in range(2):
    assert run("submit", "--spec", spec, "--host", url, "--namespace", "team-a",
               "--token", TEAM_A) == 0, capsys.readouterr().err
  assert [e["namespace"] for e in state.experiments.values()] == ["team-a"]
  mine = [p for p in state.pipelines.values() if p.get("namespace") == "team-a"]
  assert [p["display_name"] for p in mine] == ["digits"], \
      f"expected team-a's own pipeline digits, found {list(state.pipelines.values())}"
  assert len(state.versions_of(mine[0]["pipeline_id"])) == 2 and not state.versions_of("shared")
  assert len(state.runs) == 2
  assert run("schedule", "--spec", spec, "--host", url, "--namespace", "team-a",
             "--token", TEAM_A, "--name", "nightly", "--cron", "@daily") == 0
  assert [r["namespace"] for r in state.recurring_runs.values()] == ["team-a"]


def test_a_failed_run_in_a_namespace_leaves_no_version_on_a_multi_user_217_server(
    spec, multi_user, capsys):
  """2.17 lets only the KFP namespace's users delete a shared pipeline's
  version (`pipeline_server.go`@2.17.0 lines 1290-1306): a namespace's own
  is its users' to delete, so the clean-up goes through."""
  url, state = multi_user
  assert run("submit", "--spec", spec, "--host", url, "--namespace", "team-a",
             "--token", TEAM_A, "--param", "epochs=3") == 1
  err = capsys.readouterr().err.splitlines()
  assert len(err) == 1 and err[0].startswith("error: creating the run failed: HTTP 400"), \
      f"expected the run's error alone, found {err}"
  assert state.versions == {} and state.pipelines == {}, \
      f"expected nothing left uploaded, found {list(state.pipelines.values())}"


def test_a_multi_user_server_asked_without_a_namespace_is_one_line(spec, multi_user, capsys):
  url, state = multi_user
  assert run("submit", "--spec", spec, "--host", url, "--token", TEAM_A) == 1
  assert capsys.readouterr().err.splitlines() == [
      f"error: Kubeflow Pipelines at {url} is a multi-user install: expected --namespace, "
      f"your profile's namespace, found none"]
  assert state.pipelines == {} and state.experiments == {}

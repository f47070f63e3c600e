"""kubeflow/steps/notify.py: the exit handler's notice, from the steps'
records as the steps write them, posted to a real webhook on 127.0.0.1."""

import contextlib
import http.server
import json
import threading

import pytest

from kubeflow.steps import notify
from kubeflow.steps import records as step_records
from store.metadata.outcome import Outcome


def _outcome(folder: str, **states) -> Outcome:
  for step, (state, fields) in states.items():
    step_records.write(folder, step, state, started="2026-11-26T10:00:00+00:00", **fields)
  return Outcome(step_records.run_record(step_records.read(folder), "digits",
                                         folder.rsplit("/", 1)[-1]))


def test_a_failed_run_names_its_step_and_its_message(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"),
                     Transform=(step_records.COMPLETE, {}),
                     Trainer=(step_records.FAILED, {"message": "ValueError: no examples"}))
  message = notify.payload(outcome, None)
  assert message["text"] == ("digits: run run-1 FAILED; at Trainer: ValueError: no examples; "
                             "nothing pushed")
  assert message["attachments"][0]["color"] == "danger"


def test_a_pushed_run_says_its_verdict_metric_and_version(tmp_path):
  blessed = {"outputs": {"blessing": {"metadata": {"blessed": 1}}}}
  pushed = {"outputs": {"pushed_model": {"metadata": {"pushed": 1,
                                                      "pushed_version": 1795734719}}}}
  outcome = _outcome(str(tmp_path / "run-2"), Evaluator=(step_records.COMPLETE, blessed),
                     Pusher=(step_records.COMPLETE, pushed))
  message = notify.payload(outcome, "accuracy 0.9876")
  assert message["text"] == ("digits: run run-2 SUCCEEDED; blessed (accuracy 0.9876); "
                             "pushed version 1795734719")
  fields = {f["title"]: f["value"] for f in message["attachments"][0]["fields"]}
  assert fields["blessed"] == "yes (accuracy 0.9876)" and fields["pushed version"] == \
      "1795734719"


@contextlib.contextmanager
def webhook():
  """A webhook on 127.0.0.1: its URL, and the messages it received."""
  received = []

  class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802  (http.server's name)
      received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
      self.send_response(200)
      self.end_headers()

    def log_message(self, *args):
      pass

  server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  try:
    yield f"http://127.0.0.1:{server.server_port}/hooks/T0", received
  finally:
    server.shutdown()
    server.server_close()


def test_the_notice_is_posted_as_json_and_an_unreachable_hook_is_a_reason():
  with webhook() as (url, received):
    assert notify.post(url, {"text": "digits: run 1 SUCCEEDED"}) is None
    assert received == [{"text": "digits: run 1 SUCCEEDED"}]
  problem = notify.post(url, {"text": "x"}, timeout=5)
  assert problem and problem.startswith("URLError: "), problem


# Where each backend puts the exit step's output (runtime/run_layout.py):
# the open-source backend under `<pipeline>/<run id>/<task>/<salt>/`,
# Vertex AI under `<project number>/<job id>/<task>_<task id>/`.
LAYOUTS = {"kubeflow": ("digits/run-7", "notify/4f1c"),
           "vertex": ("123456789012/digits-20261128020000", "notify_-5238391871040946176")}


@pytest.mark.parametrize("backend", sorted(LAYOUTS))
def test_the_exit_step_reports_a_failed_run_on_each_backends_layout(tmp_path, backend):
  """Issue 57: on Vertex AI the notice found no run folder, posted nothing
  and exited 0 ("nothing to report"): a failed run looked healthy."""
  run, task = LAYOUTS[backend]
  folder = f"{tmp_path}/root/{run}"
  step_records.write(folder, "Trainer", step_records.FAILED,
                     started="2026-11-28T02:00:00+00:00", message="ValueError: no examples")
  with webhook() as (url, received):
    executor_input = {
        "inputs": {"parameterValues": {"notify_url": url, "pipeline_name": "digits"}},
        "outputs": {"artifacts": {"message": {"artifacts": [
            {"uri": f"{folder}/{task}/message", "type": {"schemaTitle": "system.Artifact"}}]}},
                    "outputFile": f"{folder}/{task}/executor_output.json"}}
    assert notify.main(["notify", json.dumps(executor_input)]) == 0
  run_id = run.rsplit("/", 1)[-1]
  assert [m["text"] for m in received] == [
      f"digits: run {run_id} FAILED; at Trainer: ValueError: no examples; nothing pushed"], \
      received


def test_a_stopped_run_carries_the_served_models_fall(tmp_path):
  """ServedScore ran before the gate that stopped the run: the notice says
the served model fell."""
  line = ("served model (version 17) on span 3: accuracy 0.1200 [0.0900, 0.1500], past its "
          "threshold 0.9")
  score = tmp_path / "score"
  score.write_text(json.dumps({"version": "17", "span": 3, "line": line}))
  outcome = _outcome(str(tmp_path / "run-3"),
                     ServedScore=(step_records.COMPLETE, {"outputs": {"score": {
                         "uri": str(score), "metadata": {}}}}),
                     DriftGate=(step_records.FAILED, {"message": "drift stops the run"}))
  message = notify.payload(outcome, None)
  assert line in message["text"], message["text"]
  fields = {f["title"]: f["value"] for f in message["attachments"][0]["fields"]}
  assert fields["served model"] == line, fields


def _exit_input(folder: str, url: str, status=None) -> dict:
  """The exit step's executor input on the open-source backend; `status`
  as the driver resolves a final status input (resolve.go@2.17.0 lines
  458-493), or no such input."""
  params = {"notify_url": url, "pipeline_name": "digits"}
  if status is not None:
    params["status"] = status
  return {"inputs": {"parameterValues": params},
          "outputs": {"artifacts": {"message": {"artifacts": [
              {"uri": f"{folder}/notify/4f1c/message",
               "type": {"schemaTitle": "system.Artifact"}}]}},
              "outputFile": "/tmp/kfp_outputs/output_metadata.json"}}


def test_a_run_failed_by_its_launcher_after_a_complete_step_is_notified_failed(tmp_path):
  """Issue 68: SpanWindow's program recorded COMPLETE, then its launcher
  failed to upload the step's log; Kubeflow's final status says FAILED. The
  records alone said SUCCEEDED."""
  folder = f"{tmp_path}/root/digits/run-8"
  step_records.write(folder, "SpanWindow", step_records.COMPLETE,
                     started="2026-11-28T02:00:00+00:00")
  status = {"state": "FAILED", "pipelineJobResourceName": "digits-run-8",
            "pipelineTaskName": "exit-handler-1", "error": {}}
  with webhook() as (url, received):
    assert notify.main(["notify", json.dumps(_exit_input(folder, url, status))]) == 0
  (message,) = received
  fields = {f["title"]: f["value"] for f in message["attachments"][0]["fields"]}
  assert fields["state"] == "FAILED" and fields["failed step"] == "not recorded", fields
  assert fields["state from"] == "Kubeflow (the exit handler's final status)", fields
  assert message["text"].startswith(
      "digits: run run-8 FAILED; Kubeflow failed a step whose program recorded no failure: "
      "its launcher failed after the program ended"), message["text"]
  assert message["text"].endswith("the step's log in the Kubeflow UI says why; nothing pushed"), \
      message["text"]
  assert message["attachments"][0]["color"] == "danger"


def test_without_a_final_status_the_notice_says_its_state_is_the_records(tmp_path):
  folder = f"{tmp_path}/root/digits/run-9"
  step_records.write(folder, "SpanWindow", step_records.COMPLETE,
                     started="2026-11-28T02:00:00+00:00")
  with webhook() as (url, received):
    assert notify.main(["notify", json.dumps(_exit_input(folder, url))]) == 0
  (message,) = received
  fields = {f["title"]: f["value"] for f in message["attachments"][0]["fields"]}
  assert fields["state"] == "SUCCEEDED", fields
  assert fields["state from"].startswith("the steps' records alone: Kubeflow gave this exit "
                                         "step no final status"), fields

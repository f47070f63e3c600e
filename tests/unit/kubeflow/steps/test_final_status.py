"""kubeflow/steps/final_status.py: the notice's state, Kubeflow's where the
exit step is handed it, with the steps' records for the detail."""

import pytest

from kubeflow.steps import final_status
from kubeflow.steps import records as step_records
from store.metadata.outcome import Outcome


def _outcome(folder: str, **states) -> Outcome:
  """The run's Outcome from records written as the steps write them, in order."""
  for i, (step, (state, fields)) in enumerate(states.items()):
    step_records.write(folder, step, state, started=f"2026-11-26T10:0{i}:00+00:00", **fields)
  return Outcome(step_records.run_record(step_records.read(folder), "digits", "run-1"))


def _status(state: str, message: str = "") -> dict:
  """The final status as the open-source driver feeds it (resolve.go@2.17.0
  lines 471-476), or, with a message, as Vertex AI does."""
  return {"state": state, "pipelineJobResourceName": "digits-run-1",
          "pipelineTaskName": "exit-handler-1",
          "error": {"message": message, "code": 2} if message else {}}


def test_without_a_final_status_the_records_decide_and_the_notice_says_so(tmp_path):
  failed = _outcome(str(tmp_path / "a"), Trainer=(step_records.FAILED, {"message": "OOM"}))
  done = _outcome(str(tmp_path / "b"), Trainer=(step_records.COMPLETE, {}))
  found = (final_status.verdict(None, failed), final_status.verdict(None, done))
  assert [(v.state, v.failed_step, v.message) for v in found] == [
      ("FAILED", "Trainer", "OOM"), ("SUCCEEDED", None, "")], found
  assert {v.source for v in found} == {final_status.RECORDS}, found
  assert "--final-status" in final_status.RECORDS and "2.14" in final_status.RECORDS


def test_a_launcher_failure_after_a_complete_record_is_failed_by_kubeflow(tmp_path):
  """Issue 68: the launcher's upload failed after SpanWindow's program
  recorded COMPLETE; the records alone said SUCCEEDED."""
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}))
  found = final_status.verdict(_status("FAILED"), outcome)
  assert (found.state, found.source, found.failed_step) == (
      "FAILED", final_status.KUBEFLOW, final_status.UNRECORDED), found
  assert "launcher" in found.message and "uploading an output" in found.message \
      and "the last step to start: SpanWindow" in found.message \
      and "log in the Kubeflow UI" in found.message, found.message


def test_a_step_that_recorded_its_failure_is_named_with_its_own_words(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}),
                     Trainer=(step_records.FAILED, {"message": "ValueError: no examples"}))
  found = final_status.verdict(_status("FAILED", "The DAG failed"), outcome)
  assert (found.state, found.failed_step, found.message) == (
      "FAILED", "Trainer", "ValueError: no examples"), found


@pytest.mark.parametrize("said", ["COMPLETE", "SUCCEEDED", "complete"])
def test_kubeflow_complete_or_succeeded_is_succeeded(tmp_path, said):
  """The open-source backend names ML Metadata's state (COMPLETE); Vertex AI
  and the proto the task's (SUCCEEDED)."""
  outcome = _outcome(str(tmp_path / "run-1"), Pusher=(step_records.COMPLETE, {}))
  found = final_status.verdict(_status(said), outcome)
  assert (found.state, found.source, found.failed_step) == (
      "SUCCEEDED", final_status.KUBEFLOW, None), found


def test_a_dag_left_running_is_a_failure_naming_the_step_that_never_finished(tmp_path):
  """A pod killed without a retry: its launcher published nothing, so the
  DAG stays RUNNING in ML Metadata; the killed step's record stays RUNNING."""
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}),
                     Trainer=(step_records.RUNNING, {}))
  found = final_status.verdict(_status("RUNNING"), outcome)
  assert (found.state, found.failed_step) == ("FAILED", "Trainer"), found
  assert "never finished" in found.message, found.message


def test_a_dag_left_running_with_no_record_says_a_step_ended_unreported(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}))
  found = final_status.verdict(_status("RUNNING"), outcome)
  assert (found.state, found.failed_step) == ("FAILED", final_status.UNRECORDED), found
  assert found.message.startswith("Kubeflow's state of the steps is RUNNING: a step ended "
                                  "without its launcher reporting"), found.message


def test_kubeflows_error_message_is_taken_when_no_record_names_the_failure(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}))
  found = final_status.verdict(_status("FAILED", "pod evicted: low on memory"), outcome)
  assert found.message == "pod evicted: low on memory", found
  cancelled = final_status.verdict(_status("CANCELLED"), outcome)
  assert cancelled.state == "CANCELLED" and not cancelled.succeeded, cancelled
  assert cancelled.message.startswith("Kubeflow cancelled the run"), cancelled.message


@pytest.mark.parametrize("status", ["FAILED", ["FAILED"], 7])
def test_a_final_status_that_is_not_a_struct_leaves_the_records_to_decide(tmp_path, status):
  outcome = _outcome(str(tmp_path / "run-1"), Pusher=(step_records.COMPLETE, {}))
  found = final_status.verdict(status, outcome)
  assert (found.state, found.source) == ("SUCCEEDED", final_status.RECORDS), found


def test_an_error_that_is_not_a_struct_is_no_message(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"), SpanWindow=(step_records.COMPLETE, {}))
  found = final_status.verdict({"state": "FAILED", "error": "boom"}, outcome)
  assert found.state == "FAILED" and "launcher" in found.message, found

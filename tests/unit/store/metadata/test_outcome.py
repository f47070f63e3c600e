"""store/metadata/outcome.py: what a run decided, read from its one record
(store/metadata/run_record.py), here as a Kubeflow run's steps write their
records (kubeflow/steps/records.py); the local runs' tests read it from ML
Metadata (tests/e2e/)."""

import json

from components.pusher.pusher import REFUSED
from kubeflow.steps import records as step_records
from kubeflow.steps import report as report_step
from store.metadata.outcome import Outcome

STARTED = "2026-11-26T10:00:0{}+00:00"


def _outcome(folder: str, *steps) -> Outcome:
  """Each step (name, state, fields) written as the entrypoint writes it,
  one second apart, then read back as the exit step reads the run."""
  for i, (step, state, fields) in enumerate(steps):
    step_records.write(folder, step, state, started=STARTED.format(i), **fields)
  return Outcome(step_records.run_record(step_records.read(folder), "digits",
                                         folder.rsplit("/", 1)[-1]))


def _out(key: str, **metadata) -> dict:
  return {"outputs": {key: {"uri": f"s3://root/digits/run/{key}", "metadata": metadata}}}


def test_a_killed_step_is_where_the_run_stopped(tmp_path):
  outcome = _outcome(str(tmp_path / "run-1"), ("Transform", "COMPLETE", {}),
                     ("Trainer", "RUNNING", {}))
  assert outcome.failed_step == "Trainer", outcome.states
  assert outcome.message.startswith("started but never finished"), outcome.message
  assert outcome.push_line() == "nothing pushed"
  assert outcome.state == "failed at Trainer"
  assert list(outcome.states) == ["Transform", "Trainer"]


def test_a_refused_push_says_why_in_every_view(tmp_path):
  why = "version 3 is already served and is the same model"
  outcome = _outcome(str(tmp_path / "run-2"),
                     ("Evaluator", "COMPLETE", _out("blessing", blessed=1.0)),
                     ("Pusher", "COMPLETE", _out("pushed_model", pushed=0.0, **{REFUSED: why})))
  assert outcome.blessed is True and outcome.pushed_dir is None
  assert outcome.push_line() == outcome.state == f"not pushed: {why}"
  assert outcome.refused == why


def test_kubeflow_numbers_read_as_a_local_run_reads_them(tmp_path):
  """Kubeflow's metadata keeps every number as a double: the version pushed
  reads as the folder's name, and a 0.0 flag is false."""
  outcome = _outcome(
      str(tmp_path / "run-3"), ("Evaluator", "COMPLETE", _out("blessing", blessed=1.0)),
      ("ServingCheck", "COMPLETE", _out("infra_blessing", checked=1.0, blessed=1.0)),
      ("Pusher", "COMPLETE", _out("pushed_model", pushed=1.0, pushed_version=1795734719.0,
                                  pushed_destination="s3://serving/digits/1795734719")))
  assert outcome.pushed_version == "1795734719"
  assert outcome.pushed_dir == "s3://serving/digits/1795734719"
  assert outcome.serving_failure is None and not outcome.failed
  assert outcome.push_line() == "pushed version 1795734719"


def test_a_serving_check_that_failed_is_the_reason(tmp_path):
  outcome = _outcome(
      str(tmp_path / "run-4"), ("Evaluator", "COMPLETE", _out("blessing", blessed=1.0)),
      ("ServingCheck", "COMPLETE", _out("infra_blessing", checked=1.0, blessed=0.0,
                                        reason="the model answers no request")),
      ("Pusher", "COMPLETE", _out("pushed_model", pushed=0.0)))
  assert outcome.state == "not pushed: serving check failed"
  assert outcome.push_line() == ("not pushed: serving check failed (the model answers no "
                                 "request)")


def test_the_report_step_sees_the_cached_steps_the_records_lack(tmp_path):
  """The report step's record adds what its inputs say of steps the cache
  served (no record of theirs in this run): the same Outcome, more known."""
  folder = str(tmp_path / "run-5")
  step_records.write(folder, "SpanWindow", "COMPLETE", started=STARTED.format(0))
  records = step_records.read(folder)
  pushed = {"uri": "s3://serving/digits/7", "metadata": {
      "pushed": 1.0, "pushed_version": 7.0, "pushed_destination": "s3://serving/digits/7"}}
  executor_input = {"inputs": {
      "parameterValues": {"pipeline_name": "digits", report_step.UPSTREAM: json.dumps(
          {"SpanWindow": [], "Pusher": ["SpanWindow"]})},
      "artifacts": {f"Pusher{report_step.SEPARATOR}pushed_model": {"artifacts": [pushed]}}}}
  from_records = Outcome(step_records.run_record(records, "digits", "run-5"))
  from_report = Outcome(report_step.run_record(executor_input, records, "run-5"))
  assert from_records.push_line() == "nothing new to train on (served from the cache)"
  assert from_report.states == {"SpanWindow": "COMPLETE", "Pusher": "CACHED"}
  assert from_report.pushed_version == "7"


def test_no_run_is_an_empty_outcome():
  outcome = Outcome(None)
  assert outcome.states == {} and outcome.blessed is None and not outcome.failed
  assert outcome.summary() == "no model pushed"

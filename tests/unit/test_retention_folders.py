"""Retention of Kubeflow runs, planned from the runs' folders and records
(retention/folders.py), on folders laid out as the backend lays them out
and records written as the steps write them (kubeflow/steps/records.py).

The compiled steps' run on the stand-in backend is in
tests/e2e/test_kubeflow_steps.py; here, the branches it does not take: a
run in flight, a stale one, a run starting while retention deletes.
"""

import datetime
import json
import os

from kubeflow.steps import records as step_records
from kubeflow.steps import retention as retention_step
from pipeline import cache_epoch

NEVER_CACHED = {"SpanWindow", "RunReport", "Retention", "notify"}
HOUR = datetime.timedelta(hours=1)


class Folder:
  """`<root>/<pipeline>`: runs' folders, their steps' outputs and records."""

  def __init__(self, tmp_path):
    self.path = str(tmp_path / "root" / "digits")
    self.serving = str(tmp_path / "serving")
    self.time = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)

  def output(self, run: str, task: str, key: str) -> str:
    uri = f"{self.path}/{run}/{task}/salt/{key}"
    os.makedirs(uri)
    with open(f"{uri}/data", "w") as f:
      f.write("x" * 100)
    return uri

  def step(self, run: str, task: str, reads=(), writes=(), state="COMPLETE",
           window=None, pushed=None, **extra) -> dict:
    """Runs a step: its outputs, and its record as kubeflow/steps/entrypoint.py writes it."""
    self.time += HOUR
    uris = {k: self.output(run, task, k) for k in writes}
    invocation = {"inputs": {"artifacts": {f"in{i}": {"artifacts": [{"uri": u}]}
                                           for i, u in enumerate(reads)}},
                  "outputs": {"artifacts": {k: {"artifacts": [{"uri": u}]}
                                            for k, u in uris.items()}}}
    fields = {"outputs": {k: {"uri": u, "metadata": {}} for k, u in uris.items()}, **extra}
    if window:
      fields["parameters"] = {"cache_epoch": cache_epoch.value(self.path, window)}
    if pushed:
      os.makedirs(f"{self.serving}/{pushed}")
      open(f"{self.serving}/{pushed}/saved_model.pb", "w").close()
      fields["outputs"]["pushed_model"]["metadata"] = {
          "pushed": 1, "pushed_destination": f"{self.serving}/{pushed}"}
    step_records.write(f"{self.path}/{run}", task, state, started=self.time.isoformat(),
                      **step_records.artifact_uris(invocation), **fields)
    return uris

  def full_run(self, run: str, window: str, push=None) -> dict:
    """SpanWindow, then every step executed, then RunReport."""
    self.step(run, "SpanWindow", writes=["input_config"], window=window)
    examples = self.step(run, "ImportExampleGen", writes=["examples"])["examples"]
    stats = self.step(run, "StatisticsGen", [examples], ["statistics"])["statistics"]
    model = self.step(run, "Trainer", [examples], ["model"])["model"]
    pushed = self.step(run, "Pusher", [model], ["pushed_model"], pushed=push)["pushed_model"]
    self.report(run, [examples, stats, model, pushed])
    return {"examples": examples, "statistics": stats, "model": model, "pushed": pushed}

  def report(self, run: str, used) -> None:
    self.step(run, "RunReport", reads=used, writes=["report"])

  def apply(self, delete=True, current=""):
    return retention_step.apply(self.path, 1, self.serving, NEVER_CACHED, delete, current)


def test_older_runs_lose_what_no_kept_run_and_no_served_version_needs(tmp_path):
  f = Folder(tmp_path)
  first = f.full_run("run1", "aaa", push=1)  # pushed version 1, still served
  f.step("run2", "SpanWindow", writes=["input_config"], window="aaa")
  f.report("run2", first.values())  # the same window: all from the cache
  third = f.full_run("run3", "bbb")  # a new window, nothing pushed
  listed = f.apply(delete=False)
  assert "keeping the newest 1 of 3 runs" in listed[0], listed
  assert os.path.exists(first["statistics"]), "a dry run deleted"
  lines = f.apply()
  # Version 1's lineage stays: what its push read, and what wrote that.
  for kept in (first["model"], first["pushed"], first["examples"], *third.values()):
    assert os.path.exists(kept), (kept, lines)
  # Run 1's statistics, no kept run's and no lineage: gone, and listed as such.
  assert not os.path.exists(first["statistics"]), lines
  with open(f"{f.path}/run1/retention.json") as file:
    tomb = {item["uri"] for item in json.load(file)}
  assert first["statistics"] in tomb and f"{f.path}/run1/SpanWindow/salt/input_config" in tomb
  assert os.path.exists(f"{f.path}/run2/RunReport/salt/report"), "the run page lost its report"
  # StatisticsGen may be served from the cache: window aaa gets a new epoch,
  # window bbb, which lost nothing cached, keeps its own.
  assert cache_epoch.value(f.path, "aaa") == "aaa.0.1", lines
  assert cache_epoch.value(f.path, "bbb") == "bbb.0.0"
  assert any("new cache epoch for aaa" in line for line in lines), lines
  # The records stay: `python -m kubeflow runs` still tells each run.
  assert set(step_records.read(f"{f.path}/run1")) >= {"Pusher", "RunReport"}


def test_nothing_is_deleted_while_another_run_is_in_flight(tmp_path):
  f = Folder(tmp_path)
  first = f.full_run("run1", "aaa")
  f.full_run("run2", "bbb")
  f.step("run3", "SpanWindow", writes=["input_config"], state="RUNNING", window="aaa")
  lines = f.apply(current="run2")
  assert os.path.exists(first["statistics"]), lines
  assert any("in flight (run3)" in line for line in lines), lines
  assert "would delete" in lines[1] and "dry run" not in lines[-1], lines
  assert cache_epoch.value(f.path, "aaa") == "aaa.0.0"
  # A day later with no record written, run3 is taken as killed.
  from retention import folders
  later = datetime.datetime.now(datetime.timezone.utc) + 25 * HOUR
  found = folders.plan(f.path, retention_step.read_runs(f.path), 1, f.serving,
                       NEVER_CACHED, "run2", now=later)
  assert found.in_flight == [] and first["statistics"] in {d.uri for d in found.doomed}


def test_a_run_starting_while_the_epoch_rises_stops_the_deletion(tmp_path):
  from retention import folders
  f = Folder(tmp_path)
  first = f.full_run("run1", "aaa")
  f.full_run("run2", "bbb")
  runs = retention_step.read_runs(f.path)
  found = folders.plan(f.path, runs, 1, f.serving, NEVER_CACHED, "run2")
  assert found.windows == {"aaa"}
  deleted, lines = folders.carry_out(f.path, found, {r.id: r for r in runs},
                                     in_flight_now=lambda: ["run4"])
  assert not deleted
  assert os.path.exists(first["statistics"]), lines
  assert "started meanwhile (run4)" in lines[-1], lines
  assert cache_epoch.value(f.path, "aaa") == "aaa.0.1"  # raised: harmless
  assert not os.path.exists(f"{f.path}/run1/retention.json")


def test_a_failed_step_with_retries_left_keeps_its_run_in_flight_for_an_hour(tmp_path):
  from retention import folders
  f = Folder(tmp_path)
  f.step("run1", "Trainer", state="FAILED", attempt=1, retries=2)
  f.step("run2", "Trainer", state="FAILED", attempt=3, retries=2)  # the last attempt
  f.step("run3", "Trainer", state="FAILED")  # a record with no count: final
  runs = {r.id: r for r in retention_step.read_runs(f.path)}
  now = datetime.datetime.now(datetime.timezone.utc)
  assert runs["run1"].in_flight(now), "a retry may still come"
  assert not runs["run1"].in_flight(now + 2 * HOUR), "no retry came within the hour"
  assert not runs["run2"].in_flight(now) and not runs["run3"].in_flight(now)
  # A failed run is not kept from retention: its older outputs may go.
  assert folders.plan(f.path, list(runs.values()), 1, f.serving, NEVER_CACHED,
                      now=now + 2 * HOUR).in_flight == []


def _spec(tmp_path, f: Folder, epoch_wired: bool) -> str:
  """A compiled spec's parts the command reads: the pipeline root and name,
  the serving dir's default, and the steps with their cache options."""
  epoch = {"cache_epoch": {"taskOutputParameter": {
      "producerTask": "SpanWindow", "outputParameterKey": "cache_epoch"}}}
  cached = {"cachingOptions": {"enableCache": True}}
  spec = {"pipelineInfo": {"name": "digits"},
          "defaultPipelineRoot": os.path.dirname(f.path),
          "root": {"inputDefinitions": {"parameters": {"serving_dir": {
              "parameterType": "STRING", "defaultValue": f.serving}}},
                   "dag": {"tasks": {
                       "SpanWindow": {},
                       "ImportExampleGen": {**cached, "inputs": {
                           "parameters": epoch if epoch_wired else {}}},
                       "StatisticsGen": {**cached, "inputs": {"artifacts": {"examples": {}}}},
                       "RunReport": {}}}}}
  path = tmp_path / "pipeline.yaml"
  path.write_text(json.dumps(spec))  # YAML reads JSON
  return str(path)


def test_the_command_lists_then_deletes_and_refuses_a_spec_without_the_epoch(
    tmp_path, capsys):
  from kubeflow.cli import main as kubeflow
  f = Folder(tmp_path)
  first = f.full_run("run1", "aaa")
  f.full_run("run2", "bbb")
  old = _spec(tmp_path, f, epoch_wired=False)
  assert kubeflow(["retention", "--spec", old, "--keep", "1", "--delete"]) == 2
  err = capsys.readouterr().err
  assert "ImportExampleGen without it" in err and "\n" not in err.strip(), err
  assert os.path.exists(first["statistics"])
  spec = _spec(tmp_path, f, epoch_wired=True)
  assert kubeflow(["retention", "--spec", spec, "--keep", "1"]) == 0
  out = capsys.readouterr().out
  assert "would delete" in out and first["statistics"] in out, out
  assert os.path.exists(first["statistics"]), "a dry run deleted"
  assert kubeflow(["retention", "--spec", spec, "--keep", "1", "--delete"]) == 0
  # Nothing pushed and run 2 kept: all of run 1's outputs went, and its window's epoch rose.
  assert not os.path.exists(first["statistics"]) and not os.path.exists(first["examples"])
  assert cache_epoch.value(f.path, "aaa") == "aaa.0.1", capsys.readouterr().out

"""Retention of Kubeflow runs, planned from the runs' folders and records
(store/retention/folders.py), on folders laid out as each backend lays them out
(runtime/run_layout.py: the open-source backend's and Vertex AI's) and
records written as the steps write them (kubeflow/steps/records.py).

The compiled steps' run on the stand-in backend is in
tests/e2e/test_kubeflow_steps.py; here, the branches it does not take: a
run in flight, a stale one, a run starting while retention deletes.
"""

import datetime
import json
import os
import zlib

import pytest

from kubeflow.steps import records as step_records
from kubeflow.steps import retention as retention_step
from runtime import run_layout
from store.retention import cache_epoch

NEVER_CACHED = {"SpanWindow", "RunReport", "Retention", "notify"}
HOUR = datetime.timedelta(hours=1)


PROJECT_NUMBER = "123456789012"


@pytest.fixture(params=[run_layout.KUBEFLOW, run_layout.VERTEX])
def backend(request, monkeypatch):
  """Each backend's layout; the steps name their pipeline, as compiled."""
  monkeypatch.setenv(run_layout.PIPELINE_ENV, "digits")
  return request.param


class Folder:
  """A pipeline's runs' folders, their steps' outputs and records, laid out
  as `backend` lays them: `<root>/digits/<run>/<task>/<salt>/<key>`, or
  `<root>/<project number>/<run>/<task>_<id>/<key>` on Vertex AI."""

  def __init__(self, tmp_path, backend=run_layout.KUBEFLOW):
    self.backend = backend
    self.layout = run_layout.of_run(backend, str(tmp_path / "root"), "digits", "",
                                    PROJECT_NUMBER)
    self.path, self.home = self.layout.runs, self.layout.home
    self.serving = str(tmp_path / "serving")
    self.time = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)

  def task_folder(self, run: str, task: str) -> str:
    if self.backend == run_layout.VERTEX:
      return f"{self.path}/{run}/{task}_{zlib.crc32(f'{run}/{task}'.encode())}"
    return f"{self.path}/{run}/{task}/salt"

  def output(self, run: str, task: str, key: str) -> str:
    uri = f"{self.task_folder(run, task)}/{key}"
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
      fields["parameters"] = {"cache_epoch": cache_epoch.value(self.home, window)}
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
    return retention_step.apply(self.layout, 1, self.serving, NEVER_CACHED, delete, current)


def test_older_runs_lose_what_no_kept_run_and_no_served_version_needs(tmp_path, backend):
  f = Folder(tmp_path, backend)
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
  assert first["statistics"] in tomb
  assert f"{f.task_folder('run1', 'SpanWindow')}/input_config" in tomb
  assert os.path.exists(f"{f.task_folder('run2', 'RunReport')}/report"), \
      "the run page lost its report"
  # StatisticsGen may be served from the cache: window aaa gets a new epoch,
  # window bbb, which lost nothing cached, keeps its own.
  assert cache_epoch.value(f.home, "aaa").startswith("aaa.0.1."), lines
  assert cache_epoch.value(f.home, "bbb").startswith("bbb.0.0.")
  assert any("new cache epoch for aaa" in line for line in lines), lines
  # The records stay: `python -m commands.kubeflow runs` still tells each run.
  assert set(step_records.read(f"{f.path}/run1")) >= {"Pusher", "RunReport"}


def test_on_vertex_another_pipelines_runs_beside_them_are_neither_counted_nor_touched(
    tmp_path, monkeypatch):
  """Vertex AI puts every pipeline's jobs of a project under one folder: the
  steps' records name their pipeline, and retention keeps to its own."""
  f = Folder(tmp_path, run_layout.VERTEX)
  monkeypatch.setenv(run_layout.PIPELINE_ENV, "flowers")
  theirs = f.full_run("flowers-1", "zzz")
  monkeypatch.setenv(run_layout.PIPELINE_ENV, "digits")
  first = f.full_run("digits-1", "aaa")
  f.full_run("digits-2", "bbb")
  lines = f.apply()
  assert "keeping the newest 1 of 2 runs" in lines[0], lines
  assert not os.path.exists(first["statistics"]), lines
  assert all(os.path.exists(uri) for uri in theirs.values()), lines
  assert not os.path.exists(f"{tmp_path}/root/flowers/_retention"), "another pipeline's epochs"
  assert cache_epoch.value(f.home, "aaa").startswith("aaa.0.1."), lines


def test_nothing_is_deleted_while_another_run_is_in_flight(tmp_path, backend):
  f = Folder(tmp_path, backend)
  first = f.full_run("run1", "aaa")
  f.full_run("run2", "bbb")
  f.step("run3", "SpanWindow", writes=["input_config"], state="RUNNING", window="aaa")
  lines = f.apply(current="run2")
  assert os.path.exists(first["statistics"]), lines
  assert any("in flight (run3)" in line for line in lines), lines
  assert "would delete" in lines[1] and "dry run" not in lines[-1], lines
  assert cache_epoch.value(f.home, "aaa").startswith("aaa.0.0.")
  # A day later with no record written, run3 is taken as killed.
  from store.retention import folders
  later = datetime.datetime.now(datetime.timezone.utc) + 25 * HOUR
  found = folders.plan(f.layout, retention_step.read_runs(f.layout), 1, f.serving,
                       NEVER_CACHED, "run2", now=later)
  assert found.in_flight == [] and first["statistics"] in {d.uri for d in found.doomed}


def test_a_run_starting_while_the_epoch_rises_stops_the_deletion(tmp_path, backend):
  from store.retention import folders
  f = Folder(tmp_path, backend)
  first = f.full_run("run1", "aaa")
  f.full_run("run2", "bbb")
  runs = retention_step.read_runs(f.layout)
  found = folders.plan(f.layout, runs, 1, f.serving, NEVER_CACHED, "run2")
  assert found.windows == {"aaa"}
  deleted, lines = folders.carry_out(f.layout, found, {r.id: r for r in runs},
                                     in_flight_now=lambda: ["run4"])
  assert not deleted
  assert os.path.exists(first["statistics"]), lines
  assert "started meanwhile (run4)" in lines[-1], lines
  assert cache_epoch.value(f.home, "aaa").startswith("aaa.0.1.")  # raised: harmless
  assert not os.path.exists(f"{f.path}/run1/retention.json")


def test_a_failed_step_with_retries_left_keeps_its_run_in_flight_for_an_hour(tmp_path, backend):
  from store.retention import folders
  f = Folder(tmp_path, backend)
  f.step("run1", "Trainer", state="FAILED", attempt=1, retries=2)
  f.step("run2", "Trainer", state="FAILED", attempt=3, retries=2)  # the last attempt
  f.step("run3", "Trainer", state="FAILED")  # a record with no count: final
  runs = {r.id: r for r in retention_step.read_runs(f.layout)}
  now = datetime.datetime.now(datetime.timezone.utc)
  assert runs["run1"].in_flight(now), "a retry may still come"
  assert not runs["run1"].in_flight(now + 2 * HOUR), "no retry came within the hour"
  assert not runs["run2"].in_flight(now) and not runs["run3"].in_flight(now)
  # A failed run is not kept from retention: its older outputs may go.
  assert folders.plan(f.layout, list(runs.values()), 1, f.serving, NEVER_CACHED,
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
  from commands.kubeflow.cli import main as kubeflow
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
  assert cache_epoch.value(f.home, "aaa").startswith("aaa.0.1."), capsys.readouterr().out

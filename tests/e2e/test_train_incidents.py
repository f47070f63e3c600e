"""Incidents past the happy path on the training engines' stand-ins, with
real TensorFlow workers: four TFJob workers lose nodes and crash at
different times and resume; a Vertex step retried after its CustomJob
failed trains a new one. Apart from tests/e2e/test_train_workers.py (whose
helpers and fixtures these are) so that the two modules, each several
minutes long, run on different workers of the suite."""

import os
import re
import signal
import time

import pytest

from launcher import tfjob
from tests.e2e.test_train_workers import step_inputs, tmp, wait_for

pytestmark = pytest.mark.e2e


def test_a_tfjob_of_four_workers_resumes_through_two_preemptions_and_a_crash(
    two_workers, cluster):
  """Issue 53: the Training Operator sums the Running pods' restarts against
  the budget (tests/e2e/test_tfjob_budget.py counts it); here four real
  workers lose a node twice and crash once, at different times, and resume
  from their checkpoint each time, within the budget."""
  inputs = step_inputs(two_workers, cluster, "tfjob", steps=300, workers=4,
                       checkpoint_every=20)
  step = cluster.start_step(inputs)
  checkpoints = tmp(cluster) / "tfjob" / "checkpoints"

  def newer_checkpoint(after: float):
    return lambda: any(p.stat().st_mtime > after for p in checkpoints.rglob("checkpoint"))

  def chief_restarted_after(moment: float):
    def ready():
      job = next(iter(cluster.controllers.jobs.values()))
      chief = job["pods"][0]
      return chief.started_at > moment and chief.ended() is None
    return ready
  since = time.time()
  for index, kind in ((2, "preemption"), (1, "preemption"), (3, "crash")):
    wait_for(f"a checkpoint before the {kind} of worker {index}", newer_checkpoint(since), 900)
    job = next(iter(cluster.controllers.jobs.values()))
    moment = time.time()
    if kind == "preemption":
      cluster.controllers.preempt(job["pods"][index])
    else:
      os.killpg(job["pods"][index].proc.pid, signal.SIGKILL)
    # Its peers fail on the broken collective, the chief among them, and
    # restart in their pods after the kubelet's back-off.
    wait_for(f"the chief to restart after the {kind} of worker {index}",
             chief_restarted_after(moment), 900)
    since = time.time()
  out, _ = step.communicate(timeout=1800)
  assert step.returncode == 0, out[-3000:]
  (name,) = cluster.store.created["tfjobs"]
  assert f"training job {name}: 4 workers on tfjob" in out, out[-3000:]
  # The last attempt's note reaches the step's log: the relay follows the
  # chief's pod into each container the operator restarts in it.
  assert re.search(r"resumed from step \d+ of 300", out), out[-3000:]
  # The job's state as the controller kept it (the job is deleted by now).
  assert sum(p.restarts for p in job["pods"]) < tfjob.backoff_limit(4), \
      [p.restarts for p in job["pods"]]
  exports = list((tmp(cluster) / "tfjob").rglob("saved_model.pb"))
  assert [p.parent.name for p in exports] == ["Format-Serving"], exports


def test_a_vertex_step_retried_after_its_job_failed_trains_a_new_job(two_workers, vertex):
  """Issue 53: a retried step reattached to its FAILED CustomJob and failed
  at once, on every retry. Now the retry (same inputs, as Argo or Vertex
  retries a step) leaves the failed job and trains a new one."""
  inputs = step_inputs(two_workers, vertex, "vertex")
  first = vertex.start_step(inputs)
  run = wait_for("the worker replica", lambda: next(
      (r for r in vertex.runs.values() if "workerpool1-0" in r.procs), None))
  os.killpg(run.procs["workerpool1-0"].pid, signal.SIGKILL)  # before it trains a step
  out, _ = first.communicate(timeout=600)
  assert first.returncode == 1 and "CustomJob JOB_STATE_FAILED" in out, out[-3000:]
  retried = vertex.start_step(inputs)
  out, _ = retried.communicate(timeout=900)
  assert retried.returncode == 0, out[-3000:]
  failed, new = list(vertex.runs)
  assert re.search(rf"CustomJob {new} created \(the earlier one ended JOB_STATE_FAILED\)",
                   out), out[-3000:]
  assert vertex.runs[new].job.display_name.endswith("-attempt-2"), vertex.runs[new].job
  exports = list((tmp(vertex) / "vertex").rglob("saved_model.pb"))
  assert [p.parent.name for p in exports] == ["Format-Serving"], exports

"""The stand-in kubelet's liveness probe (tests/fakes/kubelet_probes.py)
follows kubernetes' pkg/kubelet/prober/worker.go: the rules alone, then a
TFJob worker frozen by SIGSTOP (no exit, no reset) killed by its probe and
restarted in its pod, one restart, while its live peer is left alone."""

import os
import signal
import sys
import time

from tests.fakes import kubelet_probes
from trainer.jobs import tfjob
from trainer.jobs.job import Job

NAMESPACE = "team-a"


def test_a_container_is_killed_only_after_failure_threshold_failures_in_a_row():
  rules = kubelet_probes.Liveness({"failureThreshold": 3, "periodSeconds": 1})
  assert [rules.record(ok) for ok in (False, False, True, False, False)] == [False] * 5
  assert rules.record(False)  # the third failure in a row


def test_no_probe_before_the_initial_delay_and_none_on_hold_until_a_new_container():
  rules = kubelet_probes.Liveness({"initialDelaySeconds": 30, "failureThreshold": 1})
  assert not rules.due(started_at=100, now=129) and rules.due(started_at=100, now=130)
  assert rules.record(False)
  assert not rules.due(started_at=100, now=500)  # the killed container's worker holds
  rules.new_container()
  assert rules.due(started_at=500, now=530) and not rules.record(True)


def test_the_defaults_are_the_apis():
  rules = kubelet_probes.Liveness({"exec": {"command": ["true"]}})
  assert (rules.period, rules.threshold, rules.timeout, rules.initial_delay) == (10, 3, 1, 0)


def test_an_exec_probe_fails_on_a_non_zero_exit_or_its_timeout():
  assert kubelet_probes.exec_probe(["python", "-c", "pass"], dict(os.environ), 10)
  assert not kubelet_probes.exec_probe(["python", "-c", "exit(1)"], dict(os.environ), 10)
  assert not kubelet_probes.exec_probe(["python", "-c", "import time; time.sleep(5)"],
                                       dict(os.environ), 0.5)




def wait_for(what: str, ready, seconds: float):
  deadline = time.monotonic() + seconds
  while time.monotonic() < deadline:
    if ready():
      return
    time.sleep(0.1)
  raise AssertionError(f"expected {what} within {seconds:.0f} s; it did not happen")


def test_a_frozen_tfjob_worker_is_killed_by_its_probe_and_restarted_in_its_pod(engine):
  """The launcher's probe (trainer/jobs/tfjob.py), its timings shortened:
  a worker that beats, then is stopped, stops beating."""
  store, controllers, _ = engine
  beating = [sys.executable, "-c", "import os, time\nwhile True:\n"
             "  open(os.environ['TRAIN_HEARTBEAT'], 'a').close()\n"
             "  os.utime(os.environ['TRAIN_HEARTBEAT'])\n  time.sleep(0.2)"]
  body = tfjob.body(Job("train-frozen", beating, 2, {"image": "i", "heartbeatTimeoutSeconds": 2}),
                    NAMESPACE, None)
  container = body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
  container["livenessProbe"].update(periodSeconds=1, failureThreshold=2,
                                    terminationGracePeriodSeconds=1)
  key = ("kubeflow.org/v1", NAMESPACE, "tfjobs", "train-frozen")
  store.create(key, body)
  wait_for("the workers", lambda: key in controllers.jobs
           and len(controllers.jobs[key]["pods"]) == 2, 30)
  live, frozen = controllers.jobs[key]["pods"]
  # Each pod's heartbeat is a file of its own (the pods share this /tmp).
  wait_for("both heartbeats", lambda: all(os.path.exists(p.own_files[0]) for p in (live, frozen)),
           30)
  stopped, moment = frozen.proc, time.monotonic()
  os.killpg(stopped.pid, signal.SIGSTOP)
  # Bound 2 s + 2 failures 1 s apart + 1 s grace + the 1 s back-off.
  wait_for("the frozen worker's restart", lambda: frozen.restarts == 1
           and frozen.proc is not stopped and frozen.ended() is None, 20)
  assert time.monotonic() - moment >= 2, "killed before its heartbeat was stale"
  assert stopped.returncode == -signal.SIGKILL  # SIGTERM waits while it is stopped
  assert frozen.prober.kills == 1 and live.prober.kills == 0 and live.restarts == 0
  state = store.get(frozen.key)["status"]["containerStatuses"][0]
  assert state["restartCount"] == 1 and "running" in state["state"], state

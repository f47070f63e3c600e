"""STAND-IN kubelet liveness probe of one container, as kubernetes/kubernetes
v1.31+ `pkg/kubelet/prober/` runs it (read at commit 00421113, worker.go):

- `run`: a probe at once, then one every `periodSeconds` (a ticker).
- `doProbe`: a container not running is not probed; none before
  `initialDelaySeconds` since the container started ("Probe disabled for
  InitialDelaySeconds"); a result counts only after `failureThreshold`
  failures in a row (`resultRun`; a success starts the run again); a
  liveness failure puts the worker on hold until a new container (a new
  container ID) starts, its count from 0.
- prober.go `runProbe`: an exec probe runs the container's command, failing
  on a non-zero exit or on `timeoutSeconds` passing (ExecProbeTimeout, GA in
  1.20). Defaults (pkg/apis/core/v1/defaults.go `SetDefaults_Probe`):
  period 10 s, failure threshold 3, timeout 1 s.
- What the kubelet does with a liveness failure (kuberuntime_manager.go
  `computePodActions`: "failed liveness probe, will be restarted"): kills
  the container, granting the probe's `terminationGracePeriodSeconds` when
  set (else the pod's, 30 s by default; kuberuntime_container.go
  `killContainer`), SIGTERM then SIGKILL; then restarts it as its pod's
  restartPolicy says, a restart like any other (the caller's back-off and
  count: training_engines.py).

A probe's command runs here as a local process with the pod's environment
(an exec probe has the container's, not the downward API's, worker.go's note).
"""

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, Optional


class Liveness:
  """The probe's rules without processes: told when a container starts and
  each probe's result, it says when the probe is due and when to kill."""

  def __init__(self, spec: Dict):
    self.period = spec.get("periodSeconds", 10)
    self.threshold = spec.get("failureThreshold", 3)
    self.initial_delay = spec.get("initialDelaySeconds", 0)
    self.timeout = spec.get("timeoutSeconds", 1)
    self.grace = spec.get("terminationGracePeriodSeconds")
    self.last_ok, self.run, self.on_hold = True, 0, False

  def new_container(self) -> None:
    """worker.go: a new container ID resumes probing."""
    self.on_hold = False

  def due(self, started_at: float, now: float) -> bool:
    return not self.on_hold and now - started_at >= self.initial_delay

  def record(self, ok: bool) -> bool:
    """One probe's result; True when the container is to be killed."""
    if ok == self.last_ok:
      self.run += 1
    else:
      self.last_ok, self.run = ok, 1
    if ok or self.run < self.threshold:
      return False
    self.on_hold, self.run = True, 0
    return True


def exec_probe(command, env: Dict[str, str], timeout: float) -> bool:
  """Whether the command exits 0 within `timeout` s (the image's python is
  this venv's, as for the pods' commands)."""
  command = [sys.executable if command[0] == "python" else command[0], *command[1:]]
  try:
    return subprocess.run(command, env=env, timeout=timeout, capture_output=True).returncode == 0
  except subprocess.TimeoutExpired:
    return False


def stop_container(proc: subprocess.Popen, grace: float) -> None:
  """The runtime's StopContainer: SIGTERM to the container's processes, then
  SIGKILL once `grace` s pass (a stopped process only ever meets the second)."""
  for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
    try:
      os.killpg(proc.pid, sig)
      proc.wait(timeout=wait)
      return
    except ProcessLookupError:  # ended meanwhile
      return
    except subprocess.TimeoutExpired:
      continue


class Prober(threading.Thread):
  """worker.go's loop for one pod's container: `current()` gives its process
  and when it started (None while it is not running)."""

  def __init__(self, spec: Dict, env: Dict[str, str],
               current: Callable[[], Optional[tuple]], pod_grace: float = 30):
    super().__init__(daemon=True)
    self.rules, self.command, self.env = Liveness(spec), spec["exec"]["command"], env
    self.current, self.pod_grace = current, pod_grace
    self.kills = 0  # containers killed for failing the probe
    self.stopped = threading.Event()
    self.container = None

  def run(self) -> None:
    while not self.stopped.is_set():
      self.probe_once()
      self.stopped.wait(self.rules.period)

  def probe_once(self) -> None:
    running = self.current()
    if running is None or running[0].poll() is not None:
      return
    proc, started_at = running
    if proc is not self.container:
      self.container = proc
      self.rules.new_container()
    if not self.rules.due(started_at, time.time()):
      return
    if self.rules.record(exec_probe(self.command, self.env, self.rules.timeout)):
      self.kills += 1
      grace = self.rules.grace if self.rules.grace is not None else self.pod_grace
      stop_container(proc, grace)

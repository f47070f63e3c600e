"""trainer/jobs/tfjob.py: a frozen worker is restarted by its liveness probe.

The probe's program is run here in this process (no exec); the kubelet's
running of it, against a stopped process, is tests/standins/test_kubelet_probes.py."""

import os

import pytest

from trainer.jobs import HEARTBEAT_ENV, tfjob
from trainer.jobs.job import Job


def probe_exit(probe, env) -> int:
  """What the probe's `python -c` program exits with, given `env`."""
  program = probe["exec"]["command"][2]
  saved = dict(os.environ)
  os.environ.update(env)
  try:
    exec(compile(program, "<probe>", "exec"), {})
  except SystemExit as e:
    return int(e.code or 0)
  finally:
    os.environ.clear()
    os.environ.update(saved)
  return 0


def worker(pod) -> dict:
  made = tfjob.body(Job("train-abc", ["python"], 2, pod), "team-a", None)
  return made["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]


def test_each_worker_has_a_heartbeat_file_and_a_liveness_probe_with_the_default_bound():
  container = worker({"image": "i"})
  assert {"name": HEARTBEAT_ENV, "value": tfjob.HEARTBEAT_FILE} in container["env"]
  probe = container["livenessProbe"]
  assert probe["exec"]["command"][:2] == ["python", "-c"]
  assert "> 300)" in probe["exec"]["command"][2]
  assert (probe["periodSeconds"], probe["failureThreshold"],
          probe["terminationGracePeriodSeconds"]) == (10, 3, 10)
  assert tfjob.restart_bound() == 300 + 10 * 3 + 10


def test_the_compiled_bound_is_the_probes():
  probe = worker({"image": "i", "heartbeatTimeoutSeconds": 45})["livenessProbe"]
  assert "> 45)" in probe["exec"]["command"][2]


@pytest.mark.parametrize("age,exit_code", [(5, 0), (59, 0), (61, 1), (None, 0)])
def test_the_probe_fails_only_on_a_heartbeat_older_than_the_bound(tmp_path, age, exit_code):
  """No file passes: a worker before its first step waits for its peers,
  and one exporting has stopped beating (trainer/distribute.py)."""
  beat = tmp_path / "beat"
  if age is not None:
    beat.write_text("")
    os.utime(beat, (beat.stat().st_atime, beat.stat().st_mtime - age))
  assert probe_exit(tfjob.liveness_probe(60), {HEARTBEAT_ENV: str(beat)}) == exit_code


def test_a_probe_that_cannot_find_its_variable_passes(monkeypatch):
  """Not a kill: a runtime whose exec does not hand the probe the
  container's environment would otherwise restart every healthy worker."""
  monkeypatch.delenv(HEARTBEAT_ENV, raising=False)
  assert probe_exit(tfjob.liveness_probe(60), {}) == 0

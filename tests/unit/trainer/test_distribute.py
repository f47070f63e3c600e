"""trainer/distribute.py: the heartbeat a worker's liveness probe reads."""

import os
import time

from trainer import distribute


def test_the_heartbeat_is_touched_at_each_step_and_removed_when_training_ends(tmp_path):
  path = tmp_path / "beat"
  beat = distribute.Heartbeat(str(path))
  beat.on_train_batch_end(0)
  assert path.exists()
  os.utime(path, (0, 0))
  beat.on_test_batch_end(0)
  assert time.time() - path.stat().st_mtime < 60
  beat.stop()
  assert not path.exists()


def test_without_a_path_the_heartbeat_writes_nothing(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)  # a relative path would land here
  beat = distribute.Heartbeat(None)
  beat.beat()
  beat.stop()
  assert list(tmp_path.iterdir()) == []


def test_a_heartbeat_an_earlier_container_left_is_removed_at_start(tmp_path):
  """On a pod whose /tmp is an emptyDir, the file outlives the container:
  stale, it would fail the restarted worker's probe before its first step."""
  path = tmp_path / "beat"
  path.write_text("")
  os.utime(path, (0, 0))
  distribute.Heartbeat(str(path))
  assert not path.exists()

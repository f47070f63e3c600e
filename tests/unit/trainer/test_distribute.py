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


def test_without_a_path_the_heartbeat_writes_nothing(tmp_path):
  beat = distribute.Heartbeat(None)
  beat.beat()
  beat.stop()
  assert list(tmp_path.iterdir()) == []

"""trainer/distribute.py: what makes a cluster, the GPU feed, and the
heartbeat a worker's liveness probe reads."""

import json
import os
import time

import pytest
import tensorflow as tf

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


@pytest.mark.parametrize("tf_config, tasks", [
    (None, 0), ("", 0),
    (json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}), 1),
    (json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"], "ps": ["d:1"]},
                 "task": {"type": "chief", "index": 0}}), 3)])
def test_only_a_cluster_of_two_or_more_tasks_means_multi_worker(tf_config, tasks):
  assert distribute.cluster_tasks(tf_config) == tasks
  if tasks < 2:
    strategy = distribute.make_strategy(tf_config)
    assert strategy.num_replicas_in_sync == 1  # no GPU here: the default
    assert distribute.is_chief(strategy)


def test_batches_prefetched_to_a_device_are_the_same_batches():
  # The GPU feed, pointed at the CPU: what a GPU run does before its steps.
  ds = tf.data.Dataset.range(10).batch(3)
  fed = distribute.feed_device(ds, "/cpu:0")
  assert [b.numpy().tolist() for b in fed] == [b.numpy().tolist() for b in ds]
  assert distribute.feed_device(ds, None) is ds

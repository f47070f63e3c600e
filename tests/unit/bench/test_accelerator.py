"""The input benchmark's simulated accelerator (bench/accelerator.py): input
that is late shows as input wait, input that is ready does not, whatever
the clock says about the handover."""

import time

import pytest
import tensorflow as tf

from bench import accelerator


def _made_every(seconds: float, batches: int, buffer: int) -> tf.data.Dataset:
  """A pipeline that makes a batch every `seconds` (asleep, holding no core)."""
  def make(i):
    return tf.py_function(lambda x: (time.sleep(seconds), x)[1], [i], tf.int64)
  return tf.data.Dataset.range(batches).map(make).prefetch(buffer)


def test_input_slower_than_the_device_is_input_wait():
  # A batch every 10 ms for a device that needs 5 ms: it waits about half
  # of its time, and that is the input's fault.
  waits = accelerator.wait(_made_every(0.01, 60, 2), 0.005)
  assert 0.3 < waits["input_wait"] < 0.7, (
      f"expected about half the device's time waiting for input, got {waits}")


def test_input_faster_than_the_device_is_no_input_wait():
  waits = accelerator.wait(_made_every(0.001, 60, 4), 0.01)
  assert waits["input_wait"] < 0.05, f"expected no input wait, got {waits}"


def test_batches_are_stamped_where_the_pipeline_buffers_them():
  stamped = accelerator.stamped(tf.data.Dataset.range(5).batch(2).prefetch(1).take(2))
  got = list(stamped)
  assert [b[0][0].numpy().tolist() for b in got] == [[0, 1], [2, 3]], got
  assert all(abs(float(made) - time.time()) < 60 for _, made in got)
  with pytest.raises(ValueError, match="ending in prefetch"):
    accelerator.stamped(tf.data.Dataset.range(5).batch(2))

"""The input benchmark's simulated accelerator (bench/accelerator.py): input
that is late shows as input wait, input that is ready but slow to hand over
as the host's business, on a clock the test moves (no sleeping, no
timing); and batches are stamped where the pipeline buffers them."""

import time

import pytest
import tensorflow as tf

from bench import accelerator


class Clock:
  """`perf_counter`, `time` and `sleep`, moved by the device and the input."""

  def __init__(self):
    self.now = 100.0

  def perf_counter(self) -> float:
    return self.now

  def time(self) -> float:
    return self.now

  def sleep(self, seconds: float) -> None:
    self.now += seconds


def _input(clock: Clock, made: list, handover: float):
  """Batches made at the times in `made`: a `next()` waits for its batch to
  be made, then takes `handover` seconds to hand it over."""
  for at in made:
    clock.now = max(clock.now, at) + handover
    yield "batch", at


def test_input_slower_than_the_device_is_input_wait():
  # A batch every 10 ms for a device that needs 5 ms: after the first, it
  # waits 5 ms of every 10 for input, and that is the input's fault.
  clock = Clock()
  made = [100.0 + 0.010 * i for i in range(10)]
  waits = accelerator.shares(_input(clock, made, 0.0), 0.005, 0.0, clock)
  assert waits["input_wait"] == pytest.approx(9 * 0.005 / 0.095)
  assert waits["host_busy"] == pytest.approx(0.0)


def test_input_faster_than_the_device_is_no_input_wait():
  clock = Clock()
  made = [99.0 + 0.001 * i for i in range(10)]  # all ready before the device asks
  waits = accelerator.shares(_input(clock, made, 0.0002), 0.010, 0.0002, clock)
  assert waits == {"input_wait": 0.0, "host_busy": pytest.approx(0.0),
                   "wall_wait": pytest.approx(0.0)}


def test_a_ready_batch_handed_over_slowly_is_the_hosts_not_the_inputs():
  # Ready long before, but next() takes 3 ms where an idle host takes 1 ms.
  clock = Clock()
  waits = accelerator.shares(_input(clock, [50.0] * 10, 0.003), 0.010, 0.001, clock)
  assert waits["input_wait"] == 0.0
  assert waits["host_busy"] == pytest.approx(10 * 0.002 / (10 * 0.012))


def test_batches_are_stamped_where_the_pipeline_buffers_them():
  before = time.time()
  got = list(accelerator.stamped(tf.data.Dataset.range(5).batch(2).prefetch(1).take(2)))
  after = time.time()
  assert [b[0][0].numpy().tolist() for b in got] == [[0, 1], [2, 3]], got
  assert all(before <= float(made) <= after for _, made in got), (before, got, after)
  with pytest.raises(ValueError, match="ending in prefetch"):
    accelerator.stamped(tf.data.Dataset.range(5).batch(2))

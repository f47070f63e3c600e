"""The input benchmark's simulated accelerator: how long it waits for input.

The device needs `step_seconds` per batch. It is simulated by a thread that
sleeps for that long (the host's cores are free meanwhile, as they are while
a GPU computes) and then asks the dataset for the next batch.

On a machine where the input pipeline and that thread share two cores, a
slow `next()` has two causes, and only one of them is the input's fault:

  input wait  no batch was ready when the device asked: the pipeline did
              not keep up;
  host busy   a batch was ready, but handing it over took longer than on an
              idle host: `next()` runs on TensorFlow's threads, which queue
              for the cores that the pipeline's own threads hold. A host
              with cores to spare hardly has this; a 2-core one does.

The clock alone cannot tell them apart. So each batch carries the time it
was made, stamped as it enters the pipeline's last prefetch buffer: a batch
made after the device asked for it is input wait, the rest of a slow
`next()` is host busy.
"""

import statistics
import time
from typing import Dict, Iterator

import tensorflow as tf


def stamped(dataset: tf.data.Dataset) -> tf.data.Dataset:
  """`dataset` (ending in a prefetch, under any take) with each batch paired
  with the time it entered that prefetch's buffer."""
  takes = []
  while not _is_prefetch(dataset):
    if not hasattr(dataset, "_count"):
      raise ValueError(f"expected a pipeline ending in prefetch, got {type(dataset).__name__}")
    takes.append(dataset._count)  # pylint: disable=protected-access
    dataset = dataset._input_dataset  # pylint: disable=protected-access
  buffer = dataset._buffer_size  # pylint: disable=protected-access
  # A sequential map in the prefetch's producer: it runs when the batch is made.
  out = dataset._input_dataset.map(  # pylint: disable=protected-access
      lambda *batch: (batch, tf.timestamp())).prefetch(buffer)
  for count in reversed(takes):
    out = out.take(count)
  return out


def _is_prefetch(dataset) -> bool:
  return type(dataset).__name__ in ("_PrefetchDataset", "PrefetchDataset")


def _handover_seconds(element, step_seconds: float, clock=time) -> float:
  """next()'s median wall time on a dataset that is always ready."""
  it, times = iter(tf.data.Dataset.from_tensors(element).repeat()), []
  for _ in range(200):
    asked = clock.perf_counter()
    next(it)
    times.append(clock.perf_counter() - asked)
    clock.sleep(step_seconds)
  return statistics.median(times)


def wait(dataset: tf.data.Dataset, step_seconds: float, warmup: int = 5,
         clock=time) -> Dict[str, float]:
  """Shares of a simulated accelerator's time, fed by `dataset`:
  `input_wait` (no batch was ready), `host_busy` (one was, the handover was
  slow) and `wall_wait`, the two together by the clock alone (the measure
  before they were told apart).

  Handing over a batch costs time too (a fraction of a ms for 26 tensors);
  that cost, measured on a dataset that is always ready, counts as the
  device's step, not as waiting.
  """
  it = iter(stamped(dataset))
  first = [next(it) for _ in range(warmup)][0]
  return shares(it, step_seconds, _handover_seconds(first, step_seconds, clock), clock)


def shares(batches: Iterator, step_seconds: float, ready: float,
           clock=time) -> Dict[str, float]:
  """`wait`'s shares over `batches`, (batch, the time it was made) pairs,
  for a device that takes `step_seconds` a batch, a handover of `ready`
  seconds included. `clock`: `perf_counter`, `time` and `sleep`, as the
  `time` module's."""
  sleep = max(0.0, step_seconds - ready)
  input_wait = wall_wait = 0.0
  start = clock.perf_counter()
  while True:
    asked, asked_at = clock.perf_counter(), clock.time()
    try:
      _, made_at = next(batches)
    except StopIteration:
      break
    slow = max(0.0, clock.perf_counter() - asked - ready)
    wall_wait += slow
    input_wait += min(slow, max(0.0, float(made_at) - asked_at))
    clock.sleep(sleep)
  elapsed = clock.perf_counter() - start
  return {"input_wait": input_wait / elapsed, "host_busy": (wall_wait - input_wait) / elapsed,
          "wall_wait": wall_wait / elapsed}

"""The writer's worker processes: each converts one contiguous part of the
items, encodes it in bulk, splits it by a stable hash of each item's key
and writes its own shards into the staging folder (dataset/convert/writer.py
renames them into place once every worker is done)."""

import collections
import hashlib
import multiprocessing
import traceback
from queue import Empty
from typing import Dict, List, Tuple

from dataset.convert import arrow
from dataset.convert.errors import ConvertError
from dataset.convert.shards import ShardSink

CHUNK = 512  # items per RecordBatch: big enough to amortize, small in memory


def split_of(key: str, eval_percent: int) -> str:
  """`train` or `eval`, the same for the same key on every run and machine."""
  bucket = int.from_bytes(hashlib.md5(key.encode()).digest()[:8], "little") % 100
  return "eval" if bucket < eval_percent else "train"


def label_column(source):
  """The label's column name in the source's batches, or None (a table
  converted without a label)."""
  name = getattr(source, "label_name", None) or getattr(source, "label", None)
  return name if isinstance(name, str) else None


def _work(source, start: int, stop: int, worker: int, staging: str,
          output, queue) -> None:
  """Converts items [start, stop) of source; reports through queue."""
  sink = ShardSink(staging, worker, output)
  skipped: List[Tuple[str, str]] = []
  summary: collections.Counter = collections.Counter()
  classes: collections.Counter = collections.Counter()  # (split, label) -> rows
  label = label_column(source)
  try:
    for lo in range(start, stop, CHUNK):
      hi = min(lo + CHUNK, stop)
      batch, keys, bad = source.record_batch(lo, hi, output.skip_bad, summary)
      skipped += bad
      records = arrow.encode(batch) if keys else []
      by_split: Dict[str, List[bytes]] = {}
      labels = (batch.column(label).to_pylist() if keys and label in batch.schema.names
                else [None] * len(keys))
      for key, record, values in zip(keys, records, labels):
        split = split_of(key, output.eval_percent) if output.eval_percent else ""
        by_split.setdefault(split, []).append(record)
        if values:
          classes[(split, values[0])] += 1
      for split, recs in by_split.items():
        sink.write(split, recs)
      queue.put(("progress", hi - lo, sum(map(len, records))))
    queue.put(("done", worker, sink.close(), skipped, summary, classes))
  except ConvertError as e:
    queue.put(("error", worker, str(e)))
  except Exception:  # noqa: BLE001  (reported to the parent, which stops)
    queue.put(("error", worker, traceback.format_exc()))


class _InlineQueue:
  """The queue of a single in-process worker: progress goes straight to the bar."""

  def __init__(self, bar):
    self.bar, self.items = bar, []

  def put(self, message):
    if message[0] == "progress":
      self.bar.update(message[1])
    else:
      self.items.append(message)


def _collect(queue, processes, n: int, bar) -> list:
  """Waits for n 'done' messages; raises ConvertError on a worker's error or death."""
  done = []
  while len(done) < n:
    try:
      message = queue.get(timeout=1.0)
    except Empty:
      dead = [p for p in processes if p.exitcode not in (None, 0)]
      if dead:
        raise ConvertError(f"a convert worker died (exit code {dead[0].exitcode}); "
                           "nothing was written") from None
      continue
    if message[0] == "progress":
      bar.update(message[1])
    elif message[0] == "error":
      raise ConvertError(message[2])
    else:
      done.append(message)
  return done


def run(source, output, staging: str, bar) -> list:
  """Runs the workers; returns their 'done' messages or raises ConvertError."""
  n = max(1, min(output.workers, source.num_items // CHUNK + 1))
  if n == 1:
    inline = _InlineQueue(bar)
    _work(source, 0, source.num_items, 0, staging, output, inline)
    for message in inline.items:
      if message[0] == "error":
        raise ConvertError(message[2])
    return inline.items
  bounds = [source.num_items * i // n for i in range(n + 1)]
  # fork: workers inherit the source (a table, arrays, a file list) without
  # pickling it. They use only pyarrow, tfx_bsl, PIL and zlib, never
  # TensorFlow, so forking is safe even in a process that imported it.
  ctx = multiprocessing.get_context("fork")
  queue = ctx.Queue()
  processes = [ctx.Process(target=_work, daemon=True, args=(
      source, bounds[i], bounds[i + 1], i, staging, output, queue)) for i in range(n)]
  for p in processes:
    p.start()
  try:
    return sorted(_collect(queue, processes, n, bar), key=lambda m: m[1])
  finally:
    for p in processes:
      if p.is_alive():
        p.terminate()
      p.join()

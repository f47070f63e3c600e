"""Parallel, sharded, all-or-nothing writing of converted records.

A `Source` (images, tables, arrays) turns a range of its items into an Arrow
RecordBatch of list columns. Each worker process takes one contiguous part of
the items, encodes it in bulk with tfx_bsl's RecordBatch-to-Example encoder,
splits it by a stable hash of each item's key, and writes its own shards into
a staging folder. Only when every worker has finished are the shards renamed
to `<prefix>-00000-of-000NN.tfrecord[.gz]` in the output; an interrupted or
failed convert removes the staging folder and leaves nothing that looks done.
"""

import collections
import dataclasses
import hashlib
import multiprocessing
import os
import shutil
import tempfile
import time
import traceback
from queue import Empty
from typing import Dict, List, Protocol, Tuple

from tqdm import tqdm

from convert import arrow
from convert.shards import ShardSink

SUFFIX = {"GZIP": ".tfrecord.gz", "NONE": ".tfrecord"}
CHUNK = 512  # items per RecordBatch: big enough to amortize, small in memory


class Source(Protocol):
  """What convert reads from: images (`convert.images`), tables
  (`convert.tables`), arrays (`convert.arrays`) or in-memory rows
  (`convert.rows`).

  Attributes:
    num_items: how many items (records, before skipping bad ones).
  """
  num_items: int

  def record_batch(self, lo: int, hi: int, skip_bad: bool,
                   summary: collections.Counter) -> Tuple[object, List[str], list]:
    """Items [lo, hi) as (pa.RecordBatch of list columns, split keys of the
    rows kept, [(item, reason)] of the bad items skipped). Counts what the
    declaration needs (image formats and sizes) into summary. Raises
    ConvertError for a bad item unless skip_bad."""


class ConvertError(Exception):
  """An input that cannot be converted: names the path or row, and why."""


@dataclasses.dataclass(frozen=True)
class Output:
  """Where and how to write.

  Attributes:
    out_dir: the output folder; must be empty or missing.
    prefix: shard file name prefix.
    compression: GZIP or NONE.
    shard_mb: a shard is closed once it holds about this many MB.
    eval_percent: percent of items in the eval split (by a stable hash of
      their key); 0 writes one unsplit folder.
    workers: processes to use; 1 converts in this process.
    skip_bad: skip unreadable items and report them, instead of stopping.
  """
  out_dir: str
  prefix: str = "data"
  compression: str = "GZIP"
  shard_mb: float = 100.0
  eval_percent: int = 0
  workers: int = os.cpu_count() or 1
  skip_bad: bool = False

  @property
  def splits(self) -> Tuple[str, ...]:
    return ("train", "eval") if self.eval_percent else ("",)


def split_of(key: str, eval_percent: int) -> str:
  """`train` or `eval`, the same for the same key on every run and machine."""
  bucket = int.from_bytes(hashlib.md5(key.encode()).digest()[:8], "little") % 100
  return "eval" if bucket < eval_percent else "train"


def _work(source, start: int, stop: int, worker: int, staging: str,
          output: Output, queue) -> None:
  """Converts items [start, stop) of source; reports through queue."""
  sink = ShardSink(staging, worker, output)
  skipped: List[Tuple[str, str]] = []
  summary: collections.Counter = collections.Counter()
  try:
    for lo in range(start, stop, CHUNK):
      hi = min(lo + CHUNK, stop)
      batch, keys, bad = source.record_batch(lo, hi, output.skip_bad, summary)
      skipped += bad
      records = arrow.encode(batch) if keys else []
      by_split: Dict[str, List[bytes]] = {}
      for key, record in zip(keys, records):
        split = split_of(key, output.eval_percent) if output.eval_percent else ""
        by_split.setdefault(split, []).append(record)
      for split, recs in by_split.items():
        sink.write(split, recs)
      queue.put(("progress", hi - lo, sum(map(len, records))))
    queue.put(("done", worker, sink.close(), skipped, summary))
  except ConvertError as e:
    queue.put(("error", worker, str(e)))
  except Exception:  # noqa: BLE001  (reported to the parent, which stops)
    queue.put(("error", worker, traceback.format_exc()))


@dataclasses.dataclass
class Result:
  """What a convert wrote.

  Attributes:
    files: split ('' when unsplit) -> final shard paths.
    counts: split -> records written.
    skipped: (item, reason) of each skipped bad item.
    bytes: bytes written, all shards.
    seconds: wall time.
    summary: what the source counted while converting (image formats and
      sizes), merged over workers; used to write the declaration.
  """
  files: Dict[str, List[str]]
  counts: Dict[str, int]
  skipped: List[Tuple[str, str]]
  bytes: int
  seconds: float = 0.0
  summary: collections.Counter = dataclasses.field(default_factory=collections.Counter)

  @property
  def total(self) -> int:
    return sum(self.counts.values())


def _check_out_dir(out_dir: str) -> None:
  if os.path.isdir(out_dir) and os.listdir(out_dir):
    raise ConvertError(f"{out_dir}: the output folder is not empty; convert never "
                       "overwrites: choose a new folder or remove this one")
  if os.path.exists(out_dir) and not os.path.isdir(out_dir):
    raise ConvertError(f"{out_dir}: exists and is not a folder")


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


def _run_workers(source, output: Output, staging: str, bar) -> list:
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


def convert(source: Source, output: Output, declaration_fn=None, progress: bool = True) -> Result:
  """Converts every item of source into sharded TFRecords under output.out_dir.

  Args:
    source: what to convert (see `Source`).
    output: where and how to write.
    declaration_fn: optional; called with the Result, returns the text of a
      dataset declaration, written as `dataset.yaml` beside the shards.

  Returns:
    What was written.

  Raises:
    ConvertError: a bad item (unless skip_bad), or a non-empty out_dir.
      Nothing is left in out_dir then.
  """
  out_dir = os.path.abspath(output.out_dir)
  _check_out_dir(out_dir)
  parent = os.path.dirname(out_dir)
  made_parent = not os.path.isdir(parent)
  os.makedirs(parent, exist_ok=True)
  # Staged beside the output, on the same filesystem, so the final rename is
  # one atomic step.
  staging = tempfile.mkdtemp(prefix=".convert-", dir=parent)
  start = time.time()
  ok = False
  try:
    with tqdm(total=source.num_items, unit="ex", unit_scale=True,
              desc="convert", mininterval=0.5, disable=not progress) as bar:
      done = _run_workers(source, output, staging, bar)
    result = _finalize(done, output, os.path.join(staging, "out"), out_dir)
    result.seconds = time.time() - start
    if declaration_fn:
      with open(os.path.join(staging, "out", "dataset.yaml"), "w") as f:
        f.write(declaration_fn(result))
    if os.path.isdir(out_dir):
      os.rmdir(out_dir)  # empty, checked above; rename needs it gone
    os.rename(os.path.join(staging, "out"), out_dir)
    ok = True
    return result
  finally:
    shutil.rmtree(staging, ignore_errors=True)
    if made_parent and not ok:
      shutil.rmtree(parent, ignore_errors=True)


def _finalize(done: list, output: Output, tmp_out: str, out_dir: str) -> Result:
  """Renames staged shards to their final names inside tmp_out."""
  suffix = SUFFIX[output.compression]
  files: Dict[str, List[str]] = {}
  counts: Dict[str, int] = {}
  skipped: List[Tuple[str, str]] = []
  total_bytes = 0
  for split in output.splits:
    shards = [(path, n) for message in done for s, path, n in message[2]
              if s == split and n]
    folder = os.path.join(tmp_out, split)
    os.makedirs(folder, exist_ok=True)
    files[split], counts[split] = [], 0
    for i, (path, n) in enumerate(shards):
      name = f"{output.prefix}-{i:05d}-of-{len(shards):05d}{suffix}"
      os.replace(path, os.path.join(folder, name))
      files[split].append(os.path.join(out_dir, split, name) if split
                          else os.path.join(out_dir, name))
      counts[split] += n
      total_bytes += os.path.getsize(os.path.join(folder, name))
  summary: collections.Counter = collections.Counter()
  for message in done:
    skipped += message[3]
    summary.update(message[4])
  return Result(files, counts, skipped, total_bytes, summary=summary)

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
import os
import shutil
import tempfile
import time
from typing import Dict, List, Protocol, Tuple

from tqdm import tqdm

from dataset.convert import workers
from dataset.convert.errors import ConvertError

SUFFIX = {"GZIP": ".tfrecord.gz", "NONE": ".tfrecord"}


class Source(Protocol):
  """What convert reads from: images (`dataset.convert.images`), tables
  (`dataset.convert.tables`), arrays (`dataset.convert.arrays`) or in-memory rows
  (`dataset.convert.rows`).

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
    classes: (split, label as written) -> records, merged over workers.
  """
  files: Dict[str, List[str]]
  counts: Dict[str, int]
  skipped: List[Tuple[str, str]]
  bytes: int
  seconds: float = 0.0
  summary: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  classes: collections.Counter = dataclasses.field(default_factory=collections.Counter)

  @property
  def total(self) -> int:
    return sum(self.counts.values())


def _check_out_dir(out_dir: str) -> None:
  if os.path.isdir(out_dir) and os.listdir(out_dir):
    raise ConvertError(f"{out_dir}: the output folder is not empty; convert never "
                       "overwrites: choose a new folder or remove this one")
  if os.path.exists(out_dir) and not os.path.isdir(out_dir):
    raise ConvertError(f"{out_dir}: exists and is not a folder")


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
      done = workers.run(source, output, staging, bar)
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
  classes: collections.Counter = collections.Counter()
  for message in done:
    skipped += message[3]
    summary.update(message[4])
    classes.update(message[5])
  return Result(files, counts, skipped, total_bytes, summary=summary, classes=classes)

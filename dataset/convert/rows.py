"""In-memory records for convert: one dict of feature name -> values per item.

Used for data a program computes (the bundled digits, tests), so that it is
written by the same encoder, sharding and atomic output as every other input.
"""

import collections
from typing import Dict, List, Optional, Sequence

import pyarrow as pa

from dataset.convert import arrow
from dataset.convert.writer import Output, Result, convert


class Rows:
  """Items given as dicts; keys (for the split) default to the item index."""

  def __init__(self, rows: List[Dict[str, Sequence]], keys: Optional[List[str]] = None):
    self.rows = rows
    self.keys = keys or [str(i) for i in range(len(rows))]
    self.num_items = len(rows)

  def record_batch(self, lo: int, hi: int, skip_bad: bool, summary: collections.Counter):
    part = self.rows[lo:hi]
    names = list(dict.fromkeys(name for row in part for name in row))
    columns = {n: arrow.cast_lists(pa.array([row.get(n) for row in part])) for n in names}
    return arrow.record_batch(columns), self.keys[lo:hi], []


def serialize(rows: List[Dict[str, Sequence]]) -> List[bytes]:
  """Serialized tf.train.Examples of the rows, in order."""
  batch, _, _ = Rows(rows).record_batch(0, len(rows), False, collections.Counter())
  return arrow.encode(batch)


def write_rows(rows: List[Dict[str, Sequence]], out_dir: str, prefix: str,
               compression: str = "GZIP", eval_percent: int = 0,
               keys: Optional[List[str]] = None, shard_mb: float = 100.0) -> Result:
  """Writes rows as TFRecord shards in this process (no worker processes)."""
  return convert(Rows(rows, keys), Output(
      out_dir=out_dir, prefix=prefix, compression=compression, shard_mb=shard_mb,
      eval_percent=eval_percent, workers=1), progress=False)

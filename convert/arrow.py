"""Arrow columns in the layout tfx_bsl's Example encoder takes: one list per row."""

import numpy as np
import pyarrow as pa


def list_column(values) -> pa.ListArray:
  """Wraps one value per row into a list column of length-1 lists."""
  array = values if isinstance(values, pa.Array) else pa.array(values)
  offsets = pa.array(np.arange(len(array) + 1, dtype=np.int32))
  return pa.ListArray.from_arrays(offsets, array)


def bytes_column(values) -> pa.ListArray:
  """A list column of one bytes value per row (images, encoded or raw)."""
  return list_column(pa.array(values, type=pa.binary()))


def record_batch(columns: dict) -> pa.RecordBatch:
  """name -> list column, as one RecordBatch."""
  return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))

"""Arrow columns in the layout tfx_bsl's Example encoder takes: one list per row."""

from typing import List

import numpy as np
import pyarrow as pa
from tfx_bsl.coders import example_coder


def example_type(array: pa.Array) -> pa.Array:
  """The values cast to what tf.train.Example holds: float32, int64 or bytes."""
  t = array.type
  if pa.types.is_floating(t) and t != pa.float32():
    return array.cast(pa.float32())
  if (pa.types.is_integer(t) or pa.types.is_boolean(t)) and t != pa.int64():
    return array.cast(pa.int64())
  if pa.types.is_string(t) or pa.types.is_large_string(t):
    return array.cast(pa.binary())
  return array


def list_column(values) -> pa.ListArray:
  """Wraps one value per row into a list column of length-1 lists."""
  array = example_type(values if isinstance(values, pa.Array) else pa.array(values))
  offsets = pa.array(np.arange(len(array) + 1, dtype=np.int32))
  return pa.ListArray.from_arrays(offsets, array)


def optional_list_column(values: pa.Array) -> pa.ListArray:
  """Like list_column, but a null value becomes a null list: the encoder then
  writes the feature with no values, which is how a missing value looks."""
  nulls = values.is_null().to_numpy(zero_copy_only=False)
  offsets = pa.array(np.concatenate([[0], np.cumsum(~nulls)]).astype(np.int32))
  return pa.ListArray.from_arrays(offsets, example_type(values.drop_null()),
                                  mask=pa.array(nulls))


def cast_lists(column: pa.Array) -> pa.Array:
  """A list column with its values cast to what tf.train.Example holds."""
  value_type = example_type(pa.array([], column.type.value_type)).type
  return column.cast(pa.list_(value_type))


def rows_column(values: np.ndarray) -> pa.ListArray:
  """A list column of one fixed-length row per item, from a 2-D array."""
  offsets = np.arange(0, values.size + 1, max(1, values.shape[1]), dtype=np.int32)
  return pa.ListArray.from_arrays(offsets, example_type(pa.array(values.reshape(-1))))


def bytes_column(values) -> pa.ListArray:
  """A list column of one bytes value per row (images, encoded or raw)."""
  return list_column(pa.array(values, type=pa.binary()))


def record_batch(columns: dict) -> pa.RecordBatch:
  """name -> list column, as one RecordBatch."""
  return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def encode(batch: pa.RecordBatch) -> List[bytes]:
  """Serialized tf.train.Examples, one per row, encoded in bulk by tfx_bsl."""
  return example_coder.RecordBatchToExamples(batch) if batch.num_rows else []

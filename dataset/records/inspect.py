"""What TFRecord files hold: record counts, the feature spec, a few examples.

Examples are decoded in bulk with tfx_bsl's Example-to-Arrow decoder, which
also infers each feature's type; no TensorFlow import is needed.
"""

import dataclasses
import io
from typing import Dict, Iterable, List

import pyarrow as pa
import pyarrow.compute as pc
from PIL import Image
from tfx_bsl.coders import example_coder

from dataset.records import format as tfrecord
from dataset.records.image_bytes import image_format

BATCH = 1024


@dataclasses.dataclass
class FeatureStats:
  """One feature over the inspected records.

  Attributes:
    type: int64, float or bytes.
    present: records that hold the feature.
    min_length, max_length: fewest and most values in one record.
    images: for bytes: how many values are PNG/JPEG images.
  """
  type: str
  present: int = 0
  min_length: int = 1 << 62
  max_length: int = 0
  images: int = 0

  def spec(self, total: int) -> str:
    fixed = self.min_length == self.max_length
    shape = (f"fixed length {self.max_length}" if fixed else
             f"variable length {self.min_length}..{self.max_length}")
    missing = f", missing in {total - self.present}" if self.present < total else ""
    image = ", images" if self.images and self.images == self.present else ""
    return f"{self.type}, {shape}{missing}{image}"


_TYPES = {pa.int64(): "int64", pa.float32(): "float", pa.binary(): "bytes",
          pa.large_binary(): "bytes"}


def _update(stats: Dict[str, FeatureStats], batch: pa.RecordBatch) -> None:
  for name, column in zip(batch.schema.names, batch.columns):
    if pa.types.is_null(column.type):
      continue  # the feature is absent from every record of this batch
    s = stats.setdefault(name, FeatureStats(_TYPES.get(column.type.value_type, "unknown")))
    lengths = pc.drop_null(pc.list_value_length(column))
    if not len(lengths):
      continue
    s.present += len(lengths)
    bounds = pc.min_max(lengths).as_py()
    s.min_length = min(s.min_length, bounds["min"])
    s.max_length = max(s.max_length, bounds["max"])
    if s.type == "bytes":
      s.images += sum(1 for values in column.to_pylist()
                      if values and image_format(values[0]))


def _is_text(value: bytes) -> bool:
  try:
    return value.decode("utf-8").isprintable()
  except UnicodeDecodeError:
    return False


def describe_value(values) -> str:
  """A readable form of one feature's values: images as format and size."""
  if values and isinstance(values[0], bytes):
    fmt = image_format(values[0])
    if fmt:
      try:
        image = Image.open(io.BytesIO(values[0]))
        return f"<{fmt.upper()} {image.size[0]}x{image.size[1]} {image.mode}, {len(values[0])} bytes>"
      except OSError:
        return f"<{fmt.upper()}, unreadable, {len(values[0])} bytes>"
    if any(len(v) > 64 or not _is_text(v) for v in values):
      return f"<{len(values)} value(s) of {', '.join(str(len(v)) for v in values[:4])} bytes>"
  shown = list(values[:8])
  return repr(shown)[:-1] + (", ...]" if len(values) > 8 else "]")


def inspect_files(paths: Iterable[str], examples: int = 3, limit=None) -> dict:
  """Counts records per file, infers the spec, keeps a few decoded examples.

  Returns:
    {"counts": {path: records}, "spec": {name: FeatureStats},
     "examples": [ {name: values} ], "total": records}
  """
  decoder = example_coder.ExamplesToRecordBatchDecoder()
  counts, stats, shown = {}, {}, []
  total = 0
  for path in paths:
    counts[path] = 0
    pending: List[bytes] = []
    try:
      for record in tfrecord.read_records(path, limit):
        pending.append(record)
        if len(pending) == BATCH:
          total += _flush(decoder, pending, stats, shown, examples)
          counts[path] += len(pending)
          pending = []
    except tfrecord.BadRecord as e:  # say which file
      raise tfrecord.BadRecord(e.offset, e.reason, path) from None
    if pending:
      total += _flush(decoder, pending, stats, shown, examples)
      counts[path] += len(pending)
  return {"counts": counts, "spec": stats, "examples": shown, "total": total}


def _flush(decoder, records, stats, shown, examples) -> int:
  batch = decoder.DecodeBatch(records)
  _update(stats, batch)
  for row in batch.slice(0, max(0, examples - len(shown))).to_pylist():
    shown.append({k: v for k, v in row.items() if v is not None})
  return len(records)

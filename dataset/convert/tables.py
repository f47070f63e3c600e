"""Tables for convert: CSV or Parquet, one record per row.

Column types decide feature kinds: floats -> numeric float, integers and
booleans -> numeric int, strings -> categorical, lists of numbers (Parquet)
-> sequence. The label column holds integer class ids, class names that
are numbered in sorted order (and declared as `classes`), or floats: a
regression label. An optional column of image paths (relative to
the table's folder) adds an image feature, read as in `dataset.convert.images`.

A feature column with empty cells is declared `required: false`: its
missing values stay missing in the records, and Transform fills them. With
`strict=True` an empty cell stops the conversion instead (or, with
`skip_bad`, drops its row). The label and image columns never have gaps.
"""

import collections
import os
from typing import List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from dataset import names
from dataset.convert import arrow
from dataset.convert.errors import ConvertError
from dataset.convert.images import image_declaration, load_image


def _read_csv(path: str, skip_bad: bool, skipped: list) -> pa.Table:
  first_bad = []

  def on_invalid(row):
    reason = (f"line {row.number}: expected {row.expected_columns} columns, "
              f"found {row.actual_columns}: {row.text!r}")
    if skip_bad:
      skipped.append((f"{path}:{row.number}", reason))
      return "skip"
    first_bad.append(reason)
    return "error"

  try:
    # One reading thread: only then does pyarrow know the line number of a
    # bad row, which the error must name.
    # An empty cell is a missing value, in a string column too.
    return pacsv.read_csv(path, read_options=pacsv.ReadOptions(use_threads=False),
                          parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                          convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
  except pa.ArrowInvalid as e:
    raise ConvertError(f"{path}: {first_bad[0] if first_bad else e}") from None


def read_table(path: str, skip_bad: bool, skipped: list) -> pa.Table:
  """Reads a .csv or .parquet file; skipped collects malformed CSV lines."""
  if not os.path.isfile(path):
    raise ConvertError(f"{path}: no such file")
  if path.endswith(".parquet"):
    try:
      import pyarrow.parquet as pq  # pandas and Arrow datasets: 0.2 s
      return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
      raise ConvertError(f"{path}: not a readable Parquet file: {e}") from None
  if path.endswith(".csv"):
    return _read_csv(path, skip_bad, skipped)
  raise ConvertError(f"{path}: expected a .csv or .parquet file")


def _kind(path: str, name: str, dtype: pa.DataType) -> dict:
  if pa.types.is_floating(dtype):
    return {"kind": "numeric", "dtype": "float"}
  if pa.types.is_integer(dtype) or pa.types.is_boolean(dtype):
    return {"kind": "numeric", "dtype": "int"}
  if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
    return {"kind": "categorical", "dtype": "string"}
  if pa.types.is_list(dtype) and pa.types.is_floating(dtype.value_type):
    return {"kind": "sequence", "dtype": "float", "max_length": 0}
  raise ConvertError(f"{path}: column '{name}': expected numbers, strings or "
                     f"lists of floats, found {dtype}")


class Table:
  """A CSV or Parquet table.

  Keys (for the train/eval split) are the values of `key_column`, or the row
  number when there is none (stable only while the row order is).
  """

  def __init__(self, path: str, label: str, image_column: Optional[str] = None,
               key_column: Optional[str] = None, resize=None, encode=None,
               skip_bad: bool = False, strict: bool = False):
    self.path, self.label, self.image_column = path, label, image_column
    self.key_column, self.resize, self.encode = key_column, resize, encode
    self.read_skipped: List = []
    self.table = read_table(path, skip_bad, self.read_skipped)
    columns = self.table.column_names
    for role, column in (("label", label), ("image", image_column), ("key", key_column)):
      if column and column not in columns:
        raise ConvertError(f"{path}: no {role} column '{column}'; the columns "
                           f"are {', '.join(columns)}")
    self._label_ids()
    # A column with no value in any row says nothing: it is left out.
    self.empty_columns = [n for n in columns if n not in (label, image_column, key_column)
                          and self.table.column(n).null_count == self.table.num_rows]
    self.kinds = {n: _kind(path, n, self.table.schema.field(n).type) for n in columns
                  if n not in (label, image_column, key_column, *self.empty_columns)}
    self.optional = set() if strict else {
        n for n in self.kinds if self.table.column(n).null_count}
    self.num_items = self.table.num_rows
    # Each column's key in the records: itself, or a feature name made from
    # it (dataset/names.py) that the declaration keeps as its `source`.
    self.names = names.column_names(
        c for c in (label, image_column, *self.kinds) if c is not None)

  def _label_ids(self) -> None:
    column = self.table.column(self.label)
    dtype = column.type
    self.regression = pa.types.is_floating(dtype)
    if self.regression:  # a number to predict
      self.classes, self.num_classes, self.label_ids = None, 0, column
      if column.null_count:
        raise ConvertError(f"{self.path}: column '{self.label}': expected a value in "
                           f"every row, found {column.null_count} empty")
    elif pa.types.is_integer(dtype):
      self.classes = None
      valid = pc.drop_null(column)
      self.num_classes = int(pc.max(valid).as_py() or 0) + 1 if len(valid) else 0
      if len(valid) and pc.min(valid).as_py() < 0:
        raise ConvertError(f"{self.path}: column '{self.label}': expected class ids "
                           f">= 0, found {pc.min(valid).as_py()}")
      self.label_ids = column
    elif pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
      self.classes = sorted(v for v in pc.unique(column).to_pylist() if v is not None)
      self.num_classes = len(self.classes)
      self.label_ids = pc.index_in(column, value_set=pa.array(self.classes))
    else:
      raise ConvertError(f"{self.path}: column '{self.label}': expected integer "
                         f"class ids, class names or numbers, found {dtype}")

  def record_batch(self, lo: int, hi: int, skip_bad: bool, summary: collections.Counter):
    part = self.table.slice(lo, hi - lo)
    labels = self.label_ids.slice(lo, hi - lo)
    used = [self.label, *(k for k in self.kinds if k not in self.optional),
            *([self.image_column] if self.image_column else [])]
    valid = np.ones(hi - lo, dtype=bool)
    bad = []
    for name in used:
      nulls = part.column(name).is_null().combine_chunks().to_numpy(zero_copy_only=False)
      for i in np.flatnonzero(nulls & valid):
        reason = f"{self.path}: row {lo + i}: column '{name}' is missing a value"
        if not skip_bad:
          raise ConvertError(reason)
        bad.append((f"{self.path}:row {lo + i}", reason))
      valid &= ~nulls
    columns = {}
    if self.image_column:
      images = []
      folder = os.path.dirname(os.path.abspath(self.path))
      for i, rel in enumerate(part.column(self.image_column).to_pylist()):
        if not valid[i]:
          continue
        try:
          data, shape = load_image(os.path.join(folder, rel), self.resize, self.encode)
        except ConvertError as e:
          if not skip_bad:
            raise ConvertError(f"{self.path}: row {lo + i}: {e}") from None
          bad.append((f"{self.path}:row {lo + i}", str(e)))
          valid[i] = False
          continue
        summary[shape] += 1
        images.append(data)
      columns[self.image_column] = arrow.bytes_column(images)
    mask = pa.array(valid)
    for name, kind in self.kinds.items():
      column = part.column(name).filter(mask).combine_chunks()
      if kind["kind"] == "sequence":
        summary[("max_length", name)] = max(
            summary[("max_length", name)],
            int(pc.max(pc.list_value_length(column)).as_py() or 0))
        columns[name] = arrow.cast_lists(column)
      else:
        if pa.types.is_boolean(column.type):
          column = column.cast(pa.int64())
        columns[name] = (arrow.optional_list_column(column) if name in self.optional
                         else arrow.list_column(column))
    columns[self.label] = arrow.list_column(labels.filter(mask).combine_chunks()
                                            .cast(pa.float32() if self.regression
                                                  else pa.int64()))
    keys = (part.column(self.key_column).filter(mask).cast(pa.string()).to_pylist()
            if self.key_column else [str(lo + i) for i in np.flatnonzero(valid)])
    columns = {self.names[c]: values for c, values in columns.items()}
    return arrow.record_batch(columns), keys, bad

  def _sourced(self, column: str, declared: dict) -> dict:
    if self.names[column] != column:
      declared["source"] = column
    return declared

  def declaration(self, summary: collections.Counter) -> dict:
    features = {}
    if self.image_column:
      features[self.names[self.image_column]] = self._sourced(self.image_column, image_declaration(
          collections.Counter({k: v for k, v in summary.items() if k[0] != "max_length"}),
          self.image_column, self.path))
    for column, kind in self.kinds.items():
      declared = features[self.names[column]] = self._sourced(column, dict(kind))
      if kind["kind"] == "sequence":
        declared["max_length"] = max(1, summary[("max_length", column)])
      if column in self.optional:
        declared["required"] = False
    name = self.names[self.label]
    label = self._sourced(self.label, {"name": name, "kind": "regression"} if self.regression
                          else {"name": name, "num_classes": max(2, self.num_classes)})
    summary_out = {"label": label, "classes": self.classes, "features": features}
    if self.regression:
      summary_out["label_std"] = float(np.std(self.label_ids.to_numpy()))
    return summary_out

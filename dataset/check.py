"""Checks a declaration against the first records of its data, before any run.

A mismatch here would otherwise surface minutes later, deep inside Transform or
the Trainer, as a shape error that names neither the file nor the feature.
"""

import os
import zlib
from typing import Dict, List, Optional, Tuple

from google.protobuf import message

from dataset import spans
from dataset.declaration import Declaration, DeclarationError, Feature
from dataset.fields import closest
from dataset.records import format as tfrecord
from dataset.records.example import Example
from dataset.records.image_bytes import image_format
from runtime import storage

# TensorFlow loads only for data in a bucket (storage.glob, _opener): on
# this machine's disk every error here comes before its seconds of import.


def _files(pattern: str) -> List[str]:
  return [p for p in storage.glob(pattern) if not storage.isdir(p)]


def _opener(path: str):
  return storage.gfile().GFile if storage.scheme(path) else open


def _read_errors(path: str) -> tuple:
  errors = (tfrecord.BadRecord, OSError, EOFError, zlib.error)
  if not storage.scheme(path):
    return errors
  import tensorflow as tf
  return errors + (tf.errors.OpError,)


def data_files(decl: Declaration,
               window: Optional[spans.Window] = None) -> Dict[str, List[str]]:
  """The record files of each input of the latest span, keyed by split (or
  `all` when unsplit).

  Args:
    decl: the declaration.
    window: the run's spans, if already listed; listed here otherwise.

  Raises:
    DeclarationError: when a pattern matches no file.
  """
  window = window or spans.resolve(decl.data, decl.path)
  patterns = dict(decl.data.splits) or {"all": decl.data.pattern}
  files = {}
  for split, pattern in patterns.items():
    if window.spans:
      pattern = spans.fill(pattern, *window.spans[-1])
    full = os.path.join(decl.data.root, pattern)
    files[split] = sorted(_files(full))
    if not files[split]:
      raise DeclarationError(
          f"{decl.path}: field 'data': expected TFRecord files matching "
          f"{full}, found none")
  return files


def _values(feature) -> list:
  kind = feature.WhichOneof("kind")
  return list(getattr(feature, kind).value) if kind else []


def _check_image(f: Feature, value: bytes) -> Optional[Tuple[str, str]]:
  """(expected, found) when one image's bytes do not match `f`, else None."""
  image = f.image
  if image.encoding == "raw":
    if len(value) != image.raw_num_bytes:
      return (f"{image.raw_num_bytes} bytes ({image.height}x{image.width}x"
              f"{image.channels} {image.raw_dtype})", f"{len(value)} bytes")
  elif image.encoding == "auto":
    if image_format(value) not in ("png", "jpeg"):
      return "PNG- or JPEG-encoded bytes", f"bytes starting {value[:8]!r}"
  elif image_format(value) != image.encoding:
    return f"{image.encoding.upper()}-encoded bytes", f"bytes starting {value[:8]!r}"
  return None


def _check_feature(f: Feature, feature):
  """Returns (expected, found) when `feature` does not match `f`, else None."""
  kind = feature.WhichOneof("kind")
  if kind != f.proto_kind:
    return f"a {f.proto_kind} ({f.kind}, {f.dtype})", f"a {kind or 'empty feature'}"
  values = _values(feature)
  if f.kind == "image":
    if len(values) != 1:
      return "exactly one image", f"{len(values)} values"
    return _check_image(f, values[0])
  if f.kind == "numeric" and len(values) != f.length:
    return f"{f.length} value(s)", f"{len(values)} value(s)"
  if f.kind == "categorical" and len(values) != 1:
    return "exactly one value", f"{len(values)} values"
  if f.kind == "sequence" and f.dtype == "int":
    bad = [v for v in values if not 0 <= v < f.vocab_size]
    if bad:
      return f"ids in [0, {f.vocab_size})", f"{bad[0]}"
  return None


def _check_label(decl: Declaration, label):
  """(expected, found) when the label does not match its declaration, else None."""
  kind, values = label.WhichOneof("kind"), _values(label)
  if decl.label.kind == "regression":
    if kind != "float_list" or len(values) != 1:
      return "one float value (float_list), a regression label", f"{kind} {values[:3]}"
    return None
  classes = decl.label.classes
  if kind == "bytes_list" and classes and len(values) == 1:
    name = values[0].decode("utf-8", "replace")
    if name not in classes:
      return f"one of the declared classes {list(classes)}", repr(name)
    return None
  if kind != "int64_list" or len(values) != 1:
    expected = "one integer class id (int64_list)" + (
        " or one class name (bytes_list)" if classes else "")
    return expected, f"{kind} {values[:3]}"
  if not 0 <= values[0] < decl.label.num_classes:
    return f"a class id in [0, {decl.label.num_classes})", values[0]
  return None


def check_example(decl: Declaration, example, where: str):
  """Raises DeclarationError if one example does not match the declaration."""
  fmap = example.features.feature

  def fail(field, expected, found):
    raise DeclarationError(f"{where}: field '{field}': expected {expected}, "
                           f"found {found} (declared in {decl.path})")

  def absent(name: str) -> str:
    return (f"no such feature in the record; {closest(name, fmap)}the record's "
            f"features are {', '.join(sorted(fmap)) or 'none'}")

  if decl.label.name not in fmap:
    fail("label.name", f"the label {decl.label.name!r} in every record",
         absent(decl.label.name))
  mismatch = _check_label(decl, fmap[decl.label.name])
  if mismatch:
    fail(decl.label.name, *mismatch)
  for f in decl.features:
    # A feature with no value list at all is how encoders write a missing value.
    if f.name not in fmap or fmap[f.name].WhichOneof("kind") is None:
      if not f.required:
        continue
      fail(f.name, f"a {f.kind} feature (it is required; declare `required: false` "
           "if records may lack it)", absent(f.name))
    mismatch = _check_feature(f, fmap[f.name])
    if mismatch:
      fail(f.name, *mismatch)


def _check_name(decl: Declaration, path: str) -> None:
  # ImportExampleGen reads with Beam, which infers compression from the file
  # name alone: a GZIP file not named *.gz would be read as plain records.
  gz = path.endswith((".gz", ".gzip"))
  if gz != (decl.data.compression == "GZIP"):
    expected = "a name ending in .gz" if not gz else "no .gz ending"
    raise DeclarationError(
        f"{path}: field 'data.compression' is {decl.data.compression}, so the "
        f"file needs {expected} (ImportExampleGen infers compression from the "
        f"file name); rename the files or fix data.compression in {decl.path}")


def check_records(decl: Declaration, window: Optional[spans.Window] = None,
                  records_per_file: int = 20, max_files: int = 4,
                  files: Optional[Dict[str, List[str]]] = None) -> int:
  """Checks the first records of the first files of each split of the newest span.

  Args:
    decl: the declaration to check.
    window: the run's spans, if already listed (`data_files`).
    records_per_file: how many records to read from each file.
    max_files: how many files to read from each split.
    files: `data_files(decl, window)`, if already listed.

  Returns:
    How many records were checked.

  Raises:
    DeclarationError: naming the file, the record, the field, what was
      expected and what was found.
  """
  checked = 0
  for split_files in (files or data_files(decl, window)).values():
    for path in split_files:
      _check_name(decl, path)
    for path in split_files[:max_files]:
      try:
        for i, record in enumerate(tfrecord.read_records(
            path, records_per_file, decl.data.compression, opener=_opener(path))):
          try:
            example = Example.FromString(record)
          except message.DecodeError:
            raise DeclarationError(
                f"{path}: record {i}: expected a serialized tf.train.Example, "
                f"found {len(record)} bytes that do not parse as one") from None
          check_example(decl, example, f"{path}: record {i}")
          checked += 1
      except _read_errors(path) as e:
        raise DeclarationError(
            f"{path}: cannot read as a {decl.data.compression} TFRecord file "
            f"(data.compression in {decl.path}): {e}") from None
  return checked


def label_stored_as_names(decl: Declaration) -> bool:
  """Whether the first record's label is a class name (bytes), not an id.

  False when there are no records to look at yet.
  """
  if not decl.label.classes:
    return False
  try:
    files = data_files(decl)
  except DeclarationError:
    return False
  for split_files in files.values():
    for record in tfrecord.read_records(split_files[0], 1, decl.data.compression,
                                        opener=_opener(split_files[0])):
      label = Example.FromString(record).features.feature[decl.label.name]
      return label.WhichOneof("kind") == "bytes_list"
  return False


def check_local(decl: Declaration) -> None:
  """`check_records` when the records are on this machine's disk, where it
  needs no TensorFlow: a run calls it first, so a bad declaration answers in
  a second, not after TensorFlow, TFX and Beam load. Records in a bucket,
  or the bundled digits before their first run writes them, are checked by
  the run's preparation (commands/run/preparation.py).

  Raises:
    DeclarationError: as `check_records`.
  """
  if not storage.scheme(decl.data.root) and os.path.isdir(decl.data.root):
    check_records(decl)

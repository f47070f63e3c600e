"""The image check over a dataset's records: every image of each split is
fingerprinted, copies are grouped across all of them, and each kind's
findings are counted and decided (findings.py).

`check` runs in one process (`tfrecords check`, tests); the pipeline's step
runs the same functions on Beam (`fingerprint_records` per file, `judge`
once over the fingerprints)."""

import itertools
from typing import BinaryIO, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from components.image_check import copies, duplicates, findings, rows
from components.image_check.findings import Finding, Item
from components.image_check.fingerprint import NotAnImage, fingerprint
from dataset import image_checks
from dataset.types import Declaration, Feature

EXAMPLES = 6  # groups or images kept per kind, for the report's thumbnails
CHUNK = 1024  # records decoded at a time
# Below this many pixels a side, a picture has too little in it for a
# perceptual hash: the bundled 8x8 digits of one class are all "near
# copies" of each other. Such images are checked for exact copies only.
NEAR_MIN_SIDE = 24


def image_feature(decl: Declaration) -> Feature:
  """The declaration's first image feature.

  Raises:
    ValueError: it declares none.
  """
  images = decl.of_kind("image")
  if not images:
    raise ValueError(f"{decl.name}: the image check needs an image feature; "
                     "the declaration has none")
  return images[0]


def fingerprint_records(path: str, split: str, decl: Declaration,
                        opener: Callable[[str, str], BinaryIO] = open) -> List[Item]:
  """Every record of one TFRecord file (plain or GZIP) as an Item of `split`;
  for data ImportExampleGen splits by hash (`split` "all"), of the split
  each record will land in, assigned as ImportExampleGen assigns it
  (components/import_examples/hash_split.py). `opener` opens the file:
  the builtin `open`, or `tf.io.gfile.GFile` for a bucket."""
  from tfx_bsl.coders import example_coder

  from dataset.records import format as tfrecord
  feature = image_feature(decl) if decl.of_kind("image") else None
  label = decl.label.name
  assign = _hash_split(decl) if split == "all" else None
  decoder = example_coder.ExamplesToRecordBatchDecoder()
  items: List[Item] = []
  records = tfrecord.read_records(path, opener=opener)
  while True:
    chunk = list(itertools.islice(records, CHUNK))
    if not chunk:
      return items
    batch = decoder.DecodeBatch(chunk).to_pydict()
    labels = batch.get(label, [None] * len(chunk))
    if feature is None:  # a table or sequences: each row's features (rows.py)
      columns = [batch.get(f.name, [None] * len(chunk)) for f in decl.features]
      items += [rows.row_item([c[offset] for c in columns], (labels[offset] or [None])[0],
                              path, len(items) + offset, assign(record) if assign else split)
                for offset, record in enumerate(chunk)]
      continue
    images = batch.get(feature.name, [None] * len(chunk))
    for offset, record in enumerate(chunk):
      items.append(_item(images[offset], labels[offset], path, len(items),
                         assign(record) if assign else split, feature))


def _hash_split(decl: Declaration) -> Optional[Callable[[bytes], str]]:
  """The split name ImportExampleGen gives a record, for data it splits by
  hash; None for data split by folder."""
  if not decl.data.hash_buckets:
    return None
  from components.import_examples.hash_split import bucket_bounds, split_of
  names = list(decl.data.hash_buckets)
  bounds = bucket_bounds(list(decl.data.hash_buckets.values()))
  return lambda record: names[split_of(record, bounds)]


def _item(images, labels, path: str, index: int, split: str, feature: Feature) -> Item:
  label = None if not labels else _label_text(labels[0])
  if not images:
    return Item(split, path, index, label, None, "no image in the record")
  try:
    return Item(split, path, index, label, fingerprint(images[0], feature.image))
  except NotAnImage as e:
    return Item(split, path, index, label, None, str(e))


def _label_text(value) -> str:
  return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def judge(items: Sequence[Item], decl: Declaration, train_splits: Sequence[str],
          eval_splits: Sequence[str],
          declared: Optional[Mapping[str, str]] = None) -> List[Finding]:
  """Every kind with something found, in KINDS' order."""
  decision = image_checks.decisions(decl.image_checks, declared or {})
  if not decl.of_kind("image"):
    return _judge_rows(items, decl, train_splits, eval_splits, decision)
  image = image_feature(decl).image
  found: Dict[str, Finding] = {}

  def add(kind: str, counted: Iterable[Item], example: list) -> None:
    entry = found.setdefault(kind, Finding(kind, decision[kind], 0, []))
    entry.count += len(list(counted))
    if example and len(entry.examples) < EXAMPLES:
      entry.examples.append(example)

  for item in items:
    for kind in findings.quality_kinds(item, image):
      add(kind, [item], [item])
  decoded = [item for item in items if item.print is not None]
  pictures = [decoded[own[0]].print for own in copies.distinct(decoded)]
  pairs = duplicates.near_pairs([p.phash for p in pictures], [p.thumb for p in pictures],
                                [min(p.height, p.width) >= NEAR_MIN_SIDE for p in pictures])
  for kind, (counted, examples) in copies.judge(decoded, pairs, train_splits,
                                                eval_splits).items():
    add(kind, counted, [])
    found[kind].examples += examples[:EXAMPLES]
  if decl.label.kind == "classes":
    low = findings.minority_classes(items)
    if low:
      add("minority_class", {label for named in low.values() for label, _ in named}, [])
      found["minority_class"].examples += [[split, label, n] for split, named in low.items()
                                           for label, n in named]
      found["minority_class"].note = findings.minority_note(low, items)
  return [found[kind] for kind in findings.KINDS if kind in found
          and found[kind].decision != "ignore"]


def _judge_rows(items: Sequence[Item], decl: Declaration, train_splits: Sequence[str],
                eval_splits: Sequence[str], decision: Mapping[str, str]) -> List[Finding]:
  """The row check (rows.py): copies of rows, and classes per split."""
  found: Dict[str, Finding] = {}
  judged = copies.judge(items, np.empty((0, 2), dtype=np.int64), train_splits, eval_splits)
  classes = {}
  if decl.label.kind == "classes":
    classes = {"minority_class": findings.minority_classes(items),
               "small_eval_class": rows.small_eval_classes(items, eval_splits)}
  for kind, (counted, examples) in judged.items():
    found[kind] = Finding(kind, decision[kind], len(counted), examples[:EXAMPLES])
  for kind, low in classes.items():
    if low:
      named = {label for by_split in low.values() for label, _ in by_split}
      found[kind] = Finding(kind, decision[kind], len(named),
                            [[split, label, n] for split, by_split in low.items()
                             for label, n in by_split], findings.minority_note(low, items))
  for finding in found.values():
    finding.what, finding.checks = rows.ROW_KINDS[finding.kind], "row check"
  return [found[kind] for kind in findings.KINDS if kind in found
          and found[kind].decision != "ignore"]


def check(files: Mapping[str, Sequence[str]], decl: Declaration,
          train_splits: Sequence[str], eval_splits: Sequence[str],
          declared: Optional[Mapping[str, str]] = None) -> List[Finding]:
  """The findings over files by split, in this process."""
  items = [item for split, paths in files.items() for path in paths
           for item in fingerprint_records(path, split, decl)]
  return judge(items, decl, train_splits, eval_splits, declared)

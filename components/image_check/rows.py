"""The check on data without an image feature (tables, sequences): rows
judged as the image check judges pictures (copies.py), with the same kinds
and the same `stop`/`warn`/`ignore` decisions.

A row is its features' values, the label left out, as a digest: two rows
with equal digests are copies. So an eval row repeating a train row is a
`leak` (it stops by default: the eval accuracy would be judged on rows the
model trained on), rows with the same features under different labels are
a `label_conflict`, a row repeating an earlier one an `exact_duplicate`.
Classes are counted per split: `minority_class` as for pictures, and
`small_eval_class` for a class with fewer than MIN_EVAL_EXAMPLES eval rows.
"""

import hashlib
import json
from typing import Dict, List, Sequence

from components.image_check.findings import Item, class_counts
from components.image_check.fingerprint import Fingerprint

# The row check's words for what a kind counts (findings.KINDS' for images).
ROW_KINDS = {
    "leak": "eval rows that repeat a train row (the same features)",
    "label_conflict": "rows whose features another row has under a different label",
    "exact_duplicate": "rows whose features repeat an earlier row's",
    "minority_class": "classes under a quarter of their split's median class",
    "small_eval_class": "classes with fewer than 10 eval rows (one row moves their "
                        "eval accuracy by over 10 points)",
}
# Under 10 eval rows, one row moves the class's eval accuracy by more than
# 10 points, so its recall or a slice's gate on it is noise, not a measure.
MIN_EVAL_EXAMPLES = 10


def row_item(values: Sequence, label, path: str, index: int, split: str) -> Item:
  """One row as an Item: its features' values (in the declaration's order,
  the label left out) as the digest that copies.py compares."""
  text = json.dumps([_plain(v) for v in values], sort_keys=True)
  digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
  label_text = None if label is None else (
      label.decode("utf-8", "replace") if isinstance(label, bytes) else str(label))
  return Item(split, path, index, label_text, Fingerprint(0, digest, 0, 0, 0, 0.0, 0.0, 0.0, b""))


def _plain(values):
  """A feature's values as JSON can hold them (bytes as text, NaN kept)."""
  if values is None:
    return None
  return [v.hex() if isinstance(v, bytes) else repr(v) if isinstance(v, float) else v
          for v in values]


def small_eval_classes(items: Sequence[Item], eval_splits: Sequence[str]) -> Dict[str, List]:
  """split -> (label, count) of each class with fewer than
  MIN_EVAL_EXAMPLES rows in that eval split (of the classes some split
  holds: a class no eval row has is named with 0)."""
  counts = class_counts(items)
  labels = {label for by_label in counts.values() for label in by_label}
  found = {}
  for split in eval_splits:
    by_label = {label: counts.get(split, {}).get(label, 0) for label in labels}
    low = [(label, n) for label, n in sorted(by_label.items()) if n < MIN_EVAL_EXAMPLES]
    if low:
      found[split] = low
  return found

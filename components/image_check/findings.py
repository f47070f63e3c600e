"""What the image check finds, kind by kind, and what each kind decides.

Each image is judged on its own fingerprint (fingerprint.py) against the
thresholds below; copies are judged pair by pair (copies.py): an eval
picture with a copy in train is a leak, a picture with a copy under
another label a conflict. A class is judged against its split's median
class. The declaration's `image_checks:` sets, per kind,
`stop`, `warn` or `ignore` (DEFAULTS protect the blessing: a leak stops).
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from components.image_check.fingerprint import Fingerprint
from dataset.types import Image

# kind -> what a line says of its count (the kinds and their default
# decisions are the declaration's: dataset/image_checks.py)
KINDS: Dict[str, str] = {
    "leak": "eval images that repeat a train image (exact or near copies)",
    "label_conflict": "images with a copy under a different label",
    "exact_duplicate": "images that are byte-for-byte copies of an earlier one",
    "near_duplicate": "images that are near copies of an earlier one (re-encoded, resized, "
                      "cropped, brightened)",
    "undecodable": "images that do not decode as declared",
    "dark": "very dark images",
    "light": "very light images",
    "blank": "near-constant images",
    "blurry": "very blurry images",
    "tiny": "images under a quarter of the declared size a side",
    "odd_size": "images whose size or channels differ from the declaration (resized to it)",
    "minority_class": "classes under a quarter of their split's median class",
    "small_eval_class": "classes with fewer than 10 eval examples (one moves their eval "
                        "accuracy by over 10 points)",
}

DARK_MEAN, LIGHT_MEAN = 20.0, 235.0  # mean gray level, of 255
BLANK_SPREAD = 4.0  # standard deviation of the gray levels
BLURRY_SHARPNESS = 10.0  # variance of the Laplacian (an in-focus photo: hundreds)
TINY_FRACTION = 0.25  # of the declared height or width
# Of the median class of a split: the median is the size a typical class
# has, whatever the number of classes and however large one class is, so a
# 3% class among 8 (the median near 13%) is named, and two classes of 10%
# and 90% name the small one; a share of an even split named a 3% class
# only with 6 classes or fewer.
MINORITY_OF_MEDIAN = 0.25


@dataclasses.dataclass(frozen=True)
class Item:
  """One image: where it is, its label, its fingerprint (None: it does not
  decode, `error` says why)."""
  split: str
  file: str
  index: int
  label: Optional[str]
  print: Optional[Fingerprint]
  error: str = ""

  def where(self) -> str:
    return f"{self.file} record {self.index}"


@dataclasses.dataclass
class Finding:
  """One kind's findings: how many images, and examples (each a list of
  items: a group of copies, or one image; a class's count for balance)."""
  kind: str
  decision: str
  count: int
  examples: List[list]
  note: str = ""
  what: str = ""  # what the count is of, when not KINDS' words (rows.ROW_KINDS)
  checks: str = "image check"

  def line(self) -> str:
    what = self.what or KINDS[self.kind]
    return (f"{self.checks}: {self.kind}: {self.count} {what}"
            + (f" ({self.note})" if self.note else "") + f" [{self.decision}]")


def quality_kinds(item: Item, image: Image) -> List[str]:
  """The kinds one image has on its own."""
  if item.print is None:
    return ["undecodable"]
  p, kinds = item.print, []
  if p.mean < DARK_MEAN:
    kinds.append("dark")
  if p.mean > LIGHT_MEAN:
    kinds.append("light")
  if p.spread < BLANK_SPREAD:
    kinds.append("blank")
  elif p.sharpness < BLURRY_SHARPNESS:
    kinds.append("blurry")
  if min(p.height / image.height, p.width / image.width) < TINY_FRACTION:
    kinds.append("tiny")
  if (p.height, p.width, p.channels) != image.shape:
    kinds.append("odd_size")
  return kinds


def minority_classes(items: Sequence[Item]) -> Dict[str, List[Tuple[str, int]]]:
  """split -> (label, count) of each class under MINORITY_OF_MEDIAN of
  that split's median class."""
  found = {}
  for split, by_label in class_counts(items).items():
    median = float(np.median(list(by_label.values())))
    low = [(label, n) for label, n in sorted(by_label.items())
           if len(by_label) > 1 and n < MINORITY_OF_MEDIAN * median]
    if low:
      found[split] = low
  return found


def minority_note(low: Dict[str, List[Tuple[str, int]]], items: Sequence[Item]) -> str:
  """Each named class's count and share in every split, and each split's
  median class: what the finding's line says beside its count."""
  counts = class_counts(items)
  named = sorted({label for found in low.values() for label, _ in found})
  parts = []
  for label in named:
    shares = [f"{split} {by_label.get(label, 0)} of {sum(by_label.values())} "
              f"({100 * by_label.get(label, 0) / sum(by_label.values()):.1f}%)"
              for split, by_label in sorted(counts.items())]
    parts.append(f"class {label}: " + ", ".join(shares))
  medians = ", ".join(f"{split} {float(np.median(list(by_label.values()))):g}"
                      for split, by_label in sorted(counts.items()))
  return "; ".join(parts) + f"; the median class: {medians}"


def class_counts(items: Sequence[Item]) -> Dict[str, Dict[str, int]]:
  counts: Dict[str, Dict[str, int]] = {}
  for item in items:
    if item.label is not None:
      split = counts.setdefault(item.split, {})
      split[item.label] = split.get(item.label, 0) + 1
  return counts

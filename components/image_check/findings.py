"""What the image check finds, kind by kind, and what each kind decides.

Each image is judged on its own fingerprint (fingerprint.py) against the
thresholds below; groups of copies (duplicates.py) are judged by where
their members are: a group with train and eval images is a leak, one with
two labels a conflict. The declaration's `image_checks:` sets, per kind,
`stop`, `warn` or `ignore` (DEFAULTS protect the blessing: a leak stops).
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from components.image_check.fingerprint import Fingerprint
from dataset.types import Image

# kind -> what a line says of its count (the kinds and their default
# decisions are the declaration's: dataset/image_checks.py)
KINDS: Dict[str, str] = {
    "leak": "eval images that repeat a train image (exact or near copies)",
    "label_conflict": "images in groups of copies under different labels",
    "exact_duplicate": "images that are byte-for-byte copies of another",
    "near_duplicate": "images that are near copies of another (re-encoded, resized, "
                      "cropped, brightened)",
    "undecodable": "images that do not decode as declared",
    "dark": "very dark images",
    "light": "very light images",
    "blank": "near-constant images",
    "blurry": "very blurry images",
    "tiny": "images under a quarter of the declared size a side",
    "odd_size": "images whose size or channels differ from the declaration (resized to it)",
    "minority_class": "classes under a fifth of an even share of a split",
}

DARK_MEAN, LIGHT_MEAN = 20.0, 235.0  # mean gray level, of 255
BLANK_SPREAD = 4.0  # standard deviation of the gray levels
BLURRY_SHARPNESS = 10.0  # variance of the Laplacian (an in-focus photo: hundreds)
TINY_FRACTION = 0.25  # of the declared height or width
MINORITY_SHARE = 0.2  # of an even share of a split's images


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

  def line(self) -> str:
    what = KINDS[self.kind]
    return (f"image check: {self.kind}: {self.count} {what}"
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


def group_kinds(members: Sequence[Item], train_splits: Sequence[str],
                eval_splits: Sequence[str]) -> Dict[str, List[Item]]:
  """What one group of copies is: kind -> the items it counts."""
  found: Dict[str, List[Item]] = {}
  trains = [m for m in members if m.split in train_splits]
  evals = [m for m in members if m.split in eval_splits]
  if trains and evals:
    found["leak"] = evals
  if len({m.label for m in members}) > 1:
    found["label_conflict"] = list(members)
  digests: Dict[str, int] = {}
  for m in members:
    digests[m.print.digest] = digests.get(m.print.digest, 0) + 1
  exact = [m for m in members if digests[m.print.digest] > 1]
  # All but one of each set of exact copies; all but one of the rest.
  extra_exact = len(exact) - len({m.print.digest for m in exact})
  if extra_exact:
    found["exact_duplicate"] = exact[:extra_exact]
  distinct = len({m.print.digest for m in members})
  if distinct > 1:
    found["near_duplicate"] = list(members)[:distinct - 1]
  return found


def minority_classes(items: Sequence[Item]) -> Dict[str, List[Tuple[str, int]]]:
  """split -> (label, count) of each class under MINORITY_SHARE of an even
  share of that split's images."""
  counts = class_counts(items)
  found = {}
  for split, by_label in counts.items():
    total, classes = sum(by_label.values()), len(by_label)
    low = [(label, n) for label, n in sorted(by_label.items())
           if classes > 1 and n < MINORITY_SHARE * total / classes]
    if low:
      found[split] = low
  return found


def class_counts(items: Sequence[Item]) -> Dict[str, Dict[str, int]]:
  counts: Dict[str, Dict[str, int]] = {}
  for item in items:
    if item.label is not None:
      split = counts.setdefault(item.split, {})
      split[item.label] = split.get(item.label, 0) + 1
  return counts

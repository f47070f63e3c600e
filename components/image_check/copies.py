"""Copies judged pair by pair: what each picture's own copies make of it.

Pictures with the same bytes are one distinct picture (a digest); near
copies are pairs of distinct pictures (duplicates.near_pairs). A
picture's copies are the others with its bytes and those of the distinct
pictures paired with its own, each found directly: a copy of a copy is
not a copy unless it is one itself, so a chain A~B~C with A and C apart
makes neither of A and C the other's. So:

- leak: an eval picture with a copy in train;
- label_conflict: a picture with a copy under another label;
- exact_duplicate: a picture whose bytes an earlier picture has;
- near_duplicate: a distinct picture paired with an earlier one.

Counts are of pictures; each example is a group in which every two
members are copies: a picture, the copy that makes it a leak or a
conflict, and the pictures with its bytes; or a clique of near copies
(duplicates.cliques).
"""

from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from components.image_check import duplicates
from components.image_check.findings import Item

Judged = Dict[str, Tuple[List[Item], List[list]]]  # kind -> (counted, examples)


def judge(items: Sequence[Item], pairs: np.ndarray, train_splits: Sequence[str],
          eval_splits: Sequence[str]) -> Judged:
  """`items` (each with a fingerprint), `pairs` of indexes into
  `distinct(items)` that are near copies: kind -> the items counted and the
  examples."""
  members = distinct(items)
  near: Dict[int, Set[int]] = {}
  for i, j in pairs.tolist():
    near.setdefault(i, set()).add(j)
    near.setdefault(j, set()).add(i)
  found: Judged = {}

  def add(kind: str, item: Item, example: Optional[list]) -> None:
    counted, examples = found.setdefault(kind, ([], []))
    counted.append(item)
    if example:
      examples.append(example)

  for picture, own in enumerate(members):
    for index in own[1:]:  # the set of copies shown once, with its first
      add("exact_duplicate", items[index], [items[m] for m in own] if index == own[1] else None)
    if any(other < picture for other in near.get(picture, ())):
      add("near_duplicate", items[own[0]], None)
    copies = [m for other in sorted(near.get(picture, ())) for m in members[other]]
    shown = set()  # kinds with an example of this picture already
    for index in own:
      item = items[index]
      theirs = [items[m] for m in own if m != index] + [items[m] for m in copies]
      train = [c for c in theirs if c.split in train_splits]
      if item.split in eval_splits and train:
        add("leak", item, _example(item, train[0], own, items, "leak", shown))
      other_label = [c for c in theirs if c.label != item.label]
      if other_label:
        add("label_conflict", item,
            _example(item, other_label[0], own, items, "label_conflict", shown))
  if "near_duplicate" in found:
    groups = duplicates.cliques(len(members), pairs)
    found["near_duplicate"] = (found["near_duplicate"][0],
                               [[items[members[m][0]] for m in group] for group in groups])
  return found


def _example(item: Item, copy: Item, own: List[int], items: Sequence[Item], kind: str,
             shown: Set[str]) -> Optional[list]:
  """A picture and the copy that makes it `kind`, with the other pictures
  of the same bytes as the first (all of them copies of each other); one
  example of a kind per distinct picture."""
  if kind in shown:
    return None
  shown.add(kind)
  return [item, copy] + [items[m] for m in own if items[m] is not item and items[m] is not copy]


def distinct(items: Sequence[Item]) -> List[List[int]]:
  """The distinct pictures, in order of first appearance: each the indexes
  of the items with its bytes (the first is its representative)."""
  first: Dict[str, int] = {}
  out: List[List[int]] = []
  for index, item in enumerate(items):
    if item.print.digest in first:
      out[first[item.print.digest]].append(index)
    else:
      first[item.print.digest] = len(out)
      out.append([index])
  return out

"""Copies judged pair by pair (components/image_check/copies.py): a leak is
an eval picture with a copy in train, a conflict a picture with a copy
under another label, each found directly; a chain is no copy."""


import numpy as np

from components.image_check import copies
from components.image_check.findings import Item
from components.image_check.fingerprint import Fingerprint


def _item(split: str, index: int, label: str, digest: str) -> Item:
  found = Fingerprint(0, digest, 8, 8, 1, 100.0, 30.0, 50.0, b"")
  return Item(split, f"{split}.tfrecord", index, label, found)


def test_a_chain_is_judged_link_by_link():
  """A~B and B~C, A and C apart: eval C repeats train B only, and train A
  is no copy of C. Old groups counted A, B and C as one group: a leak of
  C through A, and a conflict for all three."""
  items = [_item("train", 0, "x", "A"), _item("train", 1, "x", "B"), _item("eval", 0, "y", "C")]
  pairs = np.array([[0, 1], [1, 2]])
  found = copies.judge(items, pairs, ["train"], ["eval"])
  leaked, examples = found["leak"]
  assert leaked == [items[2]] and examples == [[items[2], items[1]]], found["leak"]
  conflicts = {(i.split, i.index) for i in found["label_conflict"][0]}
  assert conflicts == {("train", 1), ("eval", 0)}, conflicts  # A has no copy under y
  assert [len(g) for g in found["near_duplicate"][1]] == [2], found["near_duplicate"]


def test_a_picture_without_a_copy_in_train_is_no_leak():
  """Eval C and eval D are copies of each other, of nothing in train."""
  items = [_item("train", 0, "x", "A"), _item("eval", 0, "x", "C"), _item("eval", 1, "x", "D")]
  found = copies.judge(items, np.array([[1, 2]]), ["train"], ["eval"])
  assert "leak" not in found and "label_conflict" not in found, found


def test_exact_copies_count_all_but_the_first_and_leak_each():
  items = [_item("train", 0, "x", "A"), _item("eval", 0, "x", "A"), _item("eval", 1, "x", "A")]
  found = copies.judge(items, np.empty((0, 2), dtype=np.int64), ["train"], ["eval"])
  assert found["exact_duplicate"][0] == items[1:] and len(found["exact_duplicate"][1]) == 1
  assert found["leak"][0] == items[1:], found["leak"]

"""The image check over records (components/image_check/check.py): a train
picture repeated in eval is a leak that stops by default; copies under two
labels conflict; the declaration and the caller set each kind's decision."""

import pytest

from components.image_check import check
from components.image_check.findings import Item
from components.image_check.fingerprint import fingerprint
from dataset.types import Data, Declaration, Feature, Image, Label
from tests.planted_images import VARIANTS, encode, picture

JPEG = Image("jpeg", 96, 96, 3)
DECL = Declaration(name="photos", path="", data=Data(root=""),
                   label=Label(name="label", kind="classes", num_classes=4),
                   features=(Feature(name="image", kind="image", image=JPEG),))


def _item(split, index, label, data):
  return Item(split, f"{split}.tfrecord", index, label, fingerprint(data, JPEG))


@pytest.fixture(scope="module")
def items():
  pictures = [picture(seed) for seed in range(40)]
  train = [_item("train", i, str(i % 4), encode(p)) for i, p in enumerate(pictures[:30])]
  evals = [_item("eval", i, str(i % 4), encode(p)) for i, p in enumerate(pictures[30:])]
  # Planted: eval 10 repeats train 0 re-encoded, eval 11 train 1 cropped;
  # train 30 is train 2 under another label.
  evals.append(_item("eval", 10, "0", VARIANTS["quality60"](pictures[0], None)))
  evals.append(_item("eval", 11, "1", VARIANTS["cropped4"](pictures[1], None)))
  train.append(_item("train", 30, "3", encode(pictures[2])))
  return train + evals


def _by_kind(found):
  return {f.kind: f for f in found}


def test_a_repeated_train_picture_in_eval_is_a_leak_that_stops(items):
  found = _by_kind(check.judge(items, DECL, ["train"], ["eval"]))
  leak = found["leak"]
  assert (leak.count, leak.decision) == (2, "stop"), leak.line()
  assert {(m.split, m.index) for group in leak.examples for m in group} >= {
      ("eval", 10), ("train", 0), ("eval", 11), ("train", 1)}
  assert leak.line().startswith("image check: leak: 2 eval images that repeat a train image")


def test_copies_under_two_labels_conflict_and_the_exact_one_is_counted(items):
  found = _by_kind(check.judge(items, DECL, ["train"], ["eval"]))
  assert found["label_conflict"].count == 2
  assert found["exact_duplicate"].count == 1


def test_each_kind_is_decided_by_the_declaration_then_the_caller(items):
  import dataclasses
  decl = dataclasses.replace(DECL, image_checks=(("leak", "warn"),))
  assert _by_kind(check.judge(items, decl, ["train"], ["eval"]))["leak"].decision == "warn"
  found = _by_kind(check.judge(items, decl, ["train"], ["eval"], {"leak": "ignore"}))
  assert "leak" not in found
  with pytest.raises(ValueError, match="expected one of stop, warn, ignore"):
    check.judge(items, DECL, ["train"], ["eval"], {"leak": "halt"})


def test_a_declaration_without_an_image_is_checked_row_by_row():
  """It was refused ("needs an image feature"); a table's rows are copies
  when their features are equal (rows.py)."""
  import dataclasses

  from components.image_check.rows import row_item
  items = [row_item([[1.0]], "0", "t", 0, "train"), row_item([[1.0]], "0", "e", 0, "eval")]
  found = check.judge(items, dataclasses.replace(DECL, features=()), ["train"], ["eval"])
  assert found[0].line().startswith("row check: leak: 1 eval rows that repeat a train row")


def test_pictures_too_small_for_a_hash_are_checked_for_exact_copies_only():
  """The bundled 8x8 digits: a perceptual hash of 64 pixels calls every
  digit of a class a copy of the others; only the byte-identical one is."""
  import dataclasses

  from tests.conftest import digit_rows
  digits = Image("png", 8, 8, 1)
  decl = dataclasses.replace(DECL, features=(Feature(name="image", kind="image", image=digits),))
  rows = digit_rows(300)
  items = [Item("train", "d", i, str(r["label"][0]), fingerprint(r["image"][0], digits))
           for i, r in enumerate(rows)]
  items.append(Item("eval", "d", 0, str(rows[5]["label"][0]),
                    fingerprint(rows[5]["image"][0], digits)))
  found = _by_kind(check.judge(items, decl, ["train"], ["eval"]))
  counts = {kind: f.count for kind, f in found.items()}
  assert counts == {"leak": 1, "exact_duplicate": 1}, [f.line() for f in found.values()]

"""Each image judged on its own (components/image_check/findings.py): black,
blank, blurry, tiny and odd-sized pictures; a class far below the others."""

from components.image_check import findings
from components.image_check.findings import Item
from components.image_check.fingerprint import fingerprint
from dataset import image_checks
from dataset.types import Image
from tests.planted_images import blurred, encode, flat, picture

JPEG = Image("jpeg", 96, 96, 3)


def _kinds(data: bytes, image: Image = JPEG):
  return findings.quality_kinds(Item("train", "f", 0, "0", fingerprint(data, image)), image)


def test_a_good_picture_has_no_kind():
  assert _kinds(encode(picture(1))) == []


def test_black_blank_blurry_tiny_and_odd_sized_pictures_are_named():
  assert {"dark", "blank"} <= set(_kinds(flat(0)))
  assert "light" in _kinds(flat(250))
  assert _kinds(flat(128)) == ["blank"]
  assert "blurry" in _kinds(blurred(2))
  assert {"tiny", "odd_size"} <= set(_kinds(encode(picture(3, size=16))))
  assert _kinds(encode(picture(4).convert("L"))) == ["odd_size"]


def test_undecodable_bytes_are_a_kind_not_a_crash():
  item = Item("train", "f", 0, "0", None, "does not decode")
  assert findings.quality_kinds(item, JPEG) == ["undecodable"]


def test_a_class_at_three_percent_is_a_minority():
  items = [Item("train", "f", i, str(i % 4), None) for i in range(388)]
  items += [Item("train", "f", 1000 + i, "rare", None) for i in range(12)]  # 3%
  assert findings.minority_classes(items) == {"train": [("rare", 12)]}


def test_a_class_at_three_percent_among_eight_is_named_with_its_share_in_each_split():
  """The issue's 1,007 training images: 31 of class 7 (3.1%), the median
  class 140; under a share of an even split it went unnamed."""
  sizes = [140, 140, 140, 140, 140, 138, 138, 31]
  items = [Item("train", "f", i, str(c), None) for c, n in enumerate(sizes) for i in range(n)]
  items += [Item("eval", "f", i, str(c), None) for c in range(8) for i in range(35 if c < 7 else 8)]
  low = findings.minority_classes(items)
  assert low == {"train": [("7", 31)], "eval": [("7", 8)]}, low
  note = findings.minority_note(low, items)
  assert note.startswith("class 7: eval 8 of 253 (3.2%), train 31 of 1007 (3.1%)"), note
  assert note.endswith("the median class: eval 35, train 140"), note


def test_every_kind_has_its_line_and_its_default():
  assert set(findings.KINDS) == set(image_checks.DEFAULTS)

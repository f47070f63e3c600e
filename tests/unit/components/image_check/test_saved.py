"""Fingerprints written and read back (components/image_check/saved.py):
every field survives, an undecodable image keeps its reason, and a reader
never finds a half-written file."""

import os

from components.image_check import saved
from components.image_check.findings import Item
from components.image_check.fingerprint import fingerprint
from dataset.types import Image
from tests.planted_images import encode, picture

JPEG = Image("jpeg", 96, 96, 3)


def test_items_come_back_as_they_went(tmp_path):
  items = [Item("train_span1", "f.gz", 0, "3", fingerprint(encode(picture(1)), JPEG)),
           Item("eval", "g.gz", 7, None, None, "expected PNG or JPEG bytes")]
  path = str(tmp_path / "cache" / "train_span1" / "key.jsonl.gz")
  saved.write(path, items)
  assert saved.read(path) == items
  assert os.listdir(os.path.dirname(path)) == ["key.jsonl.gz"]  # no temporary left


def test_a_rewrite_replaces_the_file_whole(tmp_path):
  path = str(tmp_path / "f.jsonl.gz")
  saved.write(path, [Item("train", "f", i, "0", None, "x") for i in range(5)])
  saved.write(path, [Item("train", "f", 0, "0", None, "y")])
  assert [i.error for i in saved.read(path)] == ["y"]

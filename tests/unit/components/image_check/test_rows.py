"""Rows as the row check sees them (components/image_check/rows.py): equal
features are one digest whatever the label; a class with under 10 eval
rows is named, also with none."""

from components.image_check import rows


def test_rows_with_the_same_features_share_a_digest_whatever_their_label():
  a = rows.row_item([[1.5, 2.0], [b"red"]], 0, "f", 0, "train")
  b = rows.row_item([[1.5, 2.0], [b"red"]], 1, "f", 1, "eval")
  c = rows.row_item([[1.5, 2.5], [b"red"]], 0, "f", 2, "train")
  assert a.print.digest == b.print.digest != c.print.digest
  assert (a.label, b.label) == ("0", "1")


def test_a_class_under_ten_eval_rows_is_named_and_one_with_none_too():
  items = [rows.row_item([[float(i)]], i % 3, "f", i, "train") for i in range(60)]
  items += [rows.row_item([[float(i)]], i % 2, "f", i, "eval") for i in range(30)]
  items += [rows.row_item([[100.0 + i]], 1, "f", 30 + i, "eval") for i in range(3)]
  assert rows.small_eval_classes(items, ["eval"]) == {"eval": [("2", 0)]}

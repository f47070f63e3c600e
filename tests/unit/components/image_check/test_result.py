"""The step's result (components/image_check/result.py): thumbnails of the
records its examples name, groups cut to a few with the rest counted, and
the run's lines."""

import os

from components.image_check import check, result
from dataset.convert.rows import write_rows
from dataset.types import Data, Declaration, Feature, Image, Label
from tests.planted_images import VARIANTS, encode, picture

JPEG = Image("jpeg", 96, 96, 3)
DECL = Declaration(name="photos", path="", data=Data(root=""),
                   label=Label(name="label", kind="classes", num_classes=2),
                   features=(Feature(name="image", kind="image", image=JPEG),))


def _items(tmp_path, train, evals):
  files = {}
  for split, rows in (("eval", evals), ("train", train)):  # the step's order
    write_rows(rows, str(tmp_path / split), "p")
    files[split] = [str(tmp_path / split / n) for n in sorted(os.listdir(tmp_path / split))]
  return [i for split, paths in files.items() for path in paths
          for i in check.fingerprint_records(path, split, DECL)]


def test_a_group_shows_its_members_thumbnails_and_counts_the_rest(tmp_path):
  original = picture(0)
  copies = [{"image": [VARIANTS["quality60"](original, None)], "label": [0]}] * 6
  others = [{"image": [encode(picture(s))], "label": [1]} for s in range(1, 6)]
  items = _items(tmp_path, [{"image": [encode(original)], "label": [0]}] + others, copies)
  found = check.judge(items, DECL, ["train"], ["eval"])
  out = result.as_dict(found, items, DECL)
  leak = next(f for f in out["findings"] if f["kind"] == "leak")
  group = leak["examples"][0]
  assert len(group) == result.MEMBERS and group[-1]["more"] == 7 - result.MEMBERS, group
  # The train picture the six eval copies repeat is shown beside them.
  assert [m["split"] for m in group] == ["eval", "train", "eval", "eval"], group
  assert all(m["thumb"].startswith("data:image/jpeg;base64,") and m["size"] == "96x96"
             for m in group), group
  assert out["classes"] == {"train": {"0": 1, "1": 5}, "eval": {"0": 6}}, out["classes"]
  assert result.describe(out) == "12 images checked (eval: 6, train: 6)"
  assert result.lines(out)[0].startswith("image check: leak: 6 eval images"), out


def test_nothing_found_is_no_line(tmp_path):
  items = _items(tmp_path, [{"image": [encode(picture(1))], "label": [0]}],
                 [{"image": [encode(picture(2))], "label": [1]}])
  out = result.as_dict(check.judge(items, DECL, ["train"], ["eval"]), items, DECL)
  assert result.lines(out) == [] and out["findings"] == [], out


def test_rows_show_where_they_are_and_a_regression_label_counts_no_classes():
  from components.image_check import rows
  table = Declaration(name="tips", path="", data=Data(root=""),
                      label=Label(name="tip", kind="regression", num_classes=0),
                      features=(Feature(name="fare", kind="numeric"),))
  items = [rows.row_item([[float(i)]], i / 10, "f", i, "train") for i in range(5)]
  items.append(rows.row_item([[2.0]], 0.2, "g", 0, "eval"))
  out = result.as_dict(check.judge(items, table, ["train"], ["eval"]), items, table)
  assert out["checks"] == "row check" and out["classes"] == {}, out
  assert out["findings"][0]["examples"] == [[
      {"split": "eval", "file": "g", "index": 0, "label": "0.2", "more": 0},
      {"split": "train", "file": "f", "index": 2, "label": "0.2", "more": 0}]], out
  assert result.describe(out) == "6 rows checked (eval: 1, train: 5)"

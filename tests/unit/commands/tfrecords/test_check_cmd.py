"""`tfrecords check` on records before any pipeline: one line per kind, exit 1
on a leak, exit 0 when told to warn, 2 on a bad decision."""

import os

import pytest

from commands.tfrecords.main import main
from dataset import declaration
from dataset.convert.rows import write_rows
from tests.conftest import write_declaration
from tests.planted_images import VARIANTS, encode, flat, picture


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
  folder = tmp_path_factory.mktemp("photos")
  pictures = [picture(seed) for seed in range(60)]
  rows = [{"image": [encode(p)], "label": [i % 3]} for i, p in enumerate(pictures)]
  train = rows[:45] + [{"image": [flat(0)], "label": [0]}]
  evals = rows[45:] + [{"image": [VARIANTS["quality60"](pictures[0], None)], "label": [0]}]
  data = os.path.join(str(folder), "data")
  write_rows(train, os.path.join(data, "train"), "p")
  write_rows(evals, os.path.join(data, "eval"), "p")
  raw = {"name": "photos", "label": {"name": "label", "num_classes": 3},
         "data": {"root": data, "compression": "GZIP",
                  "splits": {"train": "train/*.gz", "eval": "eval/*.gz"}},
         "features": {"image": {"kind": "image", "encoding": "jpeg", "height": 96,
                                "width": 96, "channels": 3}}}
  return write_declaration(folder, raw)


def test_a_leak_is_a_line_and_exit_1(photos, capsys):
  code = main(["check", photos, "--examples"])
  out = capsys.readouterr().out
  assert code == 1, out
  assert "image check: leak: 1 eval images that repeat a train image" in out
  assert "[stop]" in out and "eval/p-" in out, out
  assert "image check: dark: 1 very dark images" in out, out


def test_a_leak_told_to_warn_exits_0(photos, capsys):
  assert main(["check", photos, "--decide", "leak=warn"]) == 0
  assert "[warn]" in capsys.readouterr().out


def test_a_bad_decision_is_one_line_and_exit_2(photos, capsys):
  assert main(["check", photos, "--decide", "leak=halt"]) == 2
  err = capsys.readouterr().err
  assert err.startswith("error: image check leak='halt': expected one of stop, warn, ignore")


def test_data_split_by_hash_is_checked_in_the_splits_it_will_land_in(tmp_path, capsys):
  """Re-encoded copies are other records, so the hash split may put a copy
  and its original apart: each such pair is a leak, and no other is."""
  from components.import_examples.hash_split import bucket_bounds, split_of
  from dataset.convert.rows import serialize
  pictures = [picture(seed) for seed in range(100, 160)]
  originals = [{"image": [encode(p)], "label": [i % 3]} for i, p in enumerate(pictures)]
  copies = [{"image": [VARIANTS["quality60"](p, None)], "label": [i % 3]}
            for i, p in enumerate(pictures[:30])]
  data = str(tmp_path / "data")
  write_rows(originals + copies, data, "p")
  raw = {"name": "photos", "label": {"name": "label", "num_classes": 3},
         "data": {"root": data, "compression": "GZIP", "pattern": "*.gz",
                  "hash_buckets": {"train": 3, "eval": 1}},
         "features": {"image": {"kind": "image", "encoding": "jpeg", "height": 96,
                                "width": 96, "channels": 3}}}
  path = write_declaration(tmp_path, raw)
  # The buckets in the order the file declares them, as ImportExampleGen takes them.
  bounds = bucket_bounds(list(declaration.load(path).data.hash_buckets.values()))
  apart = sum(split_of(serialize([o])[0], bounds) != split_of(serialize([c])[0], bounds)
              for o, c in zip(originals, copies))
  assert apart, "the seeds planted no copy across the split: the test would prove nothing"
  code = main(["check", path])
  out = capsys.readouterr().out
  assert code == 1 and f"image check: leak: {apart} eval images" in out, (apart, out)


def test_a_new_spans_eval_repeating_an_older_spans_training_is_a_leak(tmp_path, capsys):
  """The window trains on spans 1 and 2 and judges on their eval splits: an
  eval picture of span 2 that span 1 trained on is a leak; span 0, outside
  the window, is not read."""
  from tests.conftest import span_data
  pictures = [picture(seed) for seed in range(200, 240)]
  rows = [{"image": [encode(p)], "label": [i % 3]} for i, p in enumerate(pictures)]
  data = tmp_path / "data"
  layout = {0: (rows[30:35], rows[35:40]), 1: (rows[:10], rows[10:15]),
            2: (rows[15:25], rows[25:30] + [{"image": [VARIANTS["resized90"](pictures[3], None)],
                                             "label": [0]}])}
  layout[0] = (layout[0][0] + [rows[16]], layout[0][1])  # an old copy outside the window
  for span, (train, evals) in layout.items():
    write_rows(train, str(data / f"span-{span}" / "train"), "p")
    write_rows(evals, str(data / f"span-{span}" / "eval"), "p")
  raw = {"name": "photos", "label": {"name": "label", "num_classes": 3},
         "data": dict(span_data(str(data), window=2), compression="GZIP"),
         "features": {"image": {"kind": "image", "encoding": "jpeg", "height": 96,
                                "width": 96, "channels": 3}}}
  code = main(["check", write_declaration(tmp_path, raw), "--examples"])
  out = capsys.readouterr().out
  assert code == 1 and "image check: leak: 1 eval images" in out, out
  assert "span-2/eval" in out and "span-1/train" in out and "span-0" not in out, out


def test_a_split_with_no_records_is_one_line_naming_it_and_exit_2(photos, tmp_path, capsys):
  empty = tmp_path / "empty"
  (empty / "train").mkdir(parents=True)
  assert main(["check", photos, "--data-root", str(empty)]) == 2
  err = capsys.readouterr().err
  assert err.startswith(f"error: {empty}/") and err.endswith("/*.gz: no such file\n"), err


@pytest.mark.parametrize("side, mixed", [(28, False), (32, True)])
def test_distinct_handwriting_converted_as_a_user_would_is_not_a_copy(tmp_path, capsys, side,
                                                                       mixed):
  """600 of scikit-learn's digits, no array repeated, at MNIST's size in
  class folders (at 32x32 every other one a JPEG), converted with
  `--eval-percent 20`: no leak, no copies, exit 0. The old check said
  `leak: 124 eval images ... [stop]` at 28x28 and stopped."""
  from tests.distinct_images import digits
  folder = tmp_path / "digits"
  for index, (label, data) in enumerate(digits(600, side, mixed)):
    (folder / label).mkdir(parents=True, exist_ok=True)
    suffix = ".jpg" if data[:2] == b"\xff\xd8" else ".png"
    (folder / label / f"{index}{suffix}").write_bytes(data)
  out = tmp_path / "records"
  assert main(["convert", "images", str(folder), "--output", str(out),
               "--eval-percent", "20"]) == 0
  capsys.readouterr()
  code = main(["check", str(out / "dataset.yaml")])
  printed = capsys.readouterr().out
  assert code == 0, printed
  for kind in ("leak", "label_conflict", "near_duplicate", "exact_duplicate"):
    assert f"image check: {kind}:" not in printed, printed


def test_a_table_is_checked_row_by_row_and_a_repeat_in_eval_stops(tmp_path, capsys):
  """A table (no image feature) used to be refused ("the image check needs
  an image feature", exit 2). Planted: 2 rows repeated in train, 4 eval rows
  that are train rows, 1 train row's features under another label, and
  class 2 with 3 eval rows."""
  import numpy as np
  rng = np.random.default_rng(0)

  def row(label):
    return {"x": [float(v) for v in rng.normal(size=3)], "label": [label]}
  train = [row(i % 3) for i in range(150)]
  evals = [row(i % 2) for i in range(40)] + [row(2) for _ in range(3)]
  train += [dict(train[0]), dict(train[1])]  # duplicate rows within train
  evals += [dict(train[i]) for i in (10, 12, 13, 15)]  # train rows (no class 2) in eval
  train.append({"x": train[20]["x"], "label": [(train[20]["label"][0] + 1) % 3]})
  data = str(tmp_path / "data")
  write_rows(train, os.path.join(data, "train"), "t")
  write_rows(evals, os.path.join(data, "eval"), "t")
  raw = {"name": "table", "label": {"name": "label", "num_classes": 3},
         "data": {"root": data, "compression": "GZIP",
                  "splits": {"train": "train/*.gz", "eval": "eval/*.gz"}},
         "features": {"x": {"kind": "numeric", "dtype": "float", "length": 3}}}
  path = write_declaration(tmp_path, raw)
  code = main(["check", path])
  out, err = capsys.readouterr()
  assert code == 1, out + err
  assert "row check: leak: 4 eval rows that repeat a train row (the same features) [stop]" in out
  assert "row check: label_conflict: 2 rows whose features another row has under a " \
         "different label [warn]" in out, out
  assert "row check: exact_duplicate: 7 rows whose features repeat an earlier row's" in out, out
  assert "row check: small_eval_class: 1 classes with fewer than 10 eval rows" in out, out
  assert "class 2: eval 3 of 47 (6.4%)" in out, out
  assert main(["check", path, "--decide", "leak=warn"]) == 0

"""`tfrecords check` on records before any pipeline: one line per kind, exit 1
on a leak, exit 0 when told to warn, 2 on a bad decision."""

import os

import pytest

from commands.tfrecords.main import main
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

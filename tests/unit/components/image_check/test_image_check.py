"""The ImageCheck step (components/image_check/image_check.py), its executor
run on ImportExampleGen-shaped output with Beam's in-process runner: it
publishes its findings and their page whatever they decide (the gate
before Transform stops the run: result.refusal names the kind and the
count); a span's fingerprints are computed once and read back by the next
run."""

import json
import os
import shutil

import pytest
from tfx.types import standard_artifacts

from components import ui_artifacts
from components.image_check import result as check_result
from components.image_check.image_check import Executor
from dataset.convert.rows import write_rows
from tests.planted_images import VARIANTS, encode, flat, picture

DECLARED = {"name": "photos", "path": "", "data": {"root": ""},
            "label": {"name": "label", "kind": "classes", "num_classes": 3},
            "features": [{"name": "image", "kind": "image",
                          "image": {"encoding": "jpeg", "height": 96, "width": 96,
                                    "channels": 3}}]}


@pytest.fixture(scope="module")
def rows():
  pictures = [picture(seed) for seed in range(40)]
  rows = [{"image": [encode(p)], "label": [i % 3]} for i, p in enumerate(pictures)]
  # Planted: eval's last image is train 0 re-encoded at quality 60; a black
  # picture in train.
  train = rows[:30] + [{"image": [flat(0)], "label": [1]}]
  evals = rows[30:] + [{"image": [VARIANTS["quality60"](pictures[0], None)], "label": [0]}]
  return {"train": train, "eval": evals}


def _examples(folder, rows, names) -> standard_artifacts.Examples:
  """An Examples artifact as ImportExampleGen leaves it: a split folder each."""
  examples = standard_artifacts.Examples()
  examples.uri = str(folder)
  examples.split_names = json.dumps(list(names.values()))
  for split, name in names.items():
    write_rows(rows[split], os.path.join(str(folder), f"Split-{name}"), "data")
  return examples


def _run(tmp_path, examples, trains, evals, checks=(), cache="", execution=1):
  result = standard_artifacts.String()
  result.uri = str(tmp_path / "root" / "ImageCheck" / "result" / str(execution) / "value")
  os.makedirs(os.path.dirname(result.uri), exist_ok=True)
  page = ui_artifacts.HTML()
  page.uri = str(tmp_path / "root" / "ImageCheck" / "page" / str(execution) / "value")
  os.makedirs(os.path.dirname(page.uri), exist_ok=True)
  props = {"declaration": json.dumps({**DECLARED, "image_checks": [list(c) for c in checks]}),
           "train_args": json.dumps({"splits": trains}), "eval_splits": json.dumps(evals),
           "cache_dir": cache}
  Executor().Do({"examples": [examples]}, {"result": [result], "page": [page]}, props)
  return result


def test_a_leak_is_published_with_its_page_and_the_refusal_names_it(tmp_path, rows):
  examples = _examples(tmp_path / "examples", rows, {"train": "train", "eval": "eval"})
  result = json.loads(_run(tmp_path, examples, ["train"], ["eval"]).read())
  assert check_result.refusal(result) == (
      "the image check stops the run before Transform: leak: 1 eval images that repeat a "
      "train image (exact or near copies) (the declaration's image_checks: sets each kind "
      "to stop, warn or ignore)")
  page = (tmp_path / "root" / "ImageCheck" / "page" / "1" / "value").read_text()
  assert page.startswith("<!DOCTYPE html>") and "data:image/jpeg;base64," in page, page[:300]
  assert not (tmp_path / "root" / "ImageCheck" / "result" / "1" / "fingerprints").exists()
  found = {f["kind"]: f for f in result["findings"]}
  assert found["leak"]["decision"] == "stop" and found["dark"]["decision"] == "warn", found
  group = found["leak"]["examples"][0]
  assert {(m["split"], m["index"]) for m in group} == {("eval", 10), ("train", 0)}, group
  assert all(m["thumb"].startswith("data:image/jpeg;base64,") for m in group), group


def test_warned_kinds_refuse_nothing(tmp_path, rows, capsys):
  examples = _examples(tmp_path / "examples", rows, {"train": "train", "eval": "eval"})
  result = json.loads(_run(tmp_path, examples, ["train"], ["eval"],
                           checks=[("leak", "warn")]).read())
  # The black picture is dark and blank; the re-encoded copy a near one too.
  assert [f["kind"] for f in result["findings"]] == [
      "leak", "near_duplicate", "dark", "blank"], result["findings"]
  assert result["images"] == {"train": 31, "eval": 11}, result["images"]
  assert result["classes"]["eval"] == {"0": 5, "1": 3, "2": 3}, result["classes"]
  out = capsys.readouterr().out
  assert "image check: leak: 1 eval images that repeat a train image" in out, out


def test_a_spans_fingerprints_are_computed_once_and_read_by_the_next_run(tmp_path, rows):
  names = {"train": "train_span1", "eval": "eval_span1"}
  cache = str(tmp_path / "cache")
  first = _examples(tmp_path / "run1", rows, names)
  args = (["train_span1"], ["eval_span1"], [("leak", "warn")], cache)
  one = json.loads(_run(tmp_path, first, *args, execution=1).read())
  assert (one["files"], one["reused"]) == (2, 0), one
  assert sorted(os.listdir(cache)) == ["eval_span1", "train_span1"]
  # The next run's ImportExampleGen output: the same files, elsewhere.
  shutil.copytree(tmp_path / "run1", tmp_path / "run2")
  second = standard_artifacts.Examples()
  second.uri, second.split_names = str(tmp_path / "run2"), first.split_names
  two = json.loads(_run(tmp_path, second, *args, execution=2).read())
  assert (two["files"], two["reused"]) == (2, 2), two
  assert [f["count"] for f in two["findings"]] == [f["count"] for f in one["findings"]]
  shown = two["findings"][0]["examples"][0][0]["file"]
  assert shown.startswith(str(tmp_path / "run2")), shown  # this run's copy of the records


def test_a_changed_file_is_fingerprinted_again(tmp_path, rows):
  names = {"train": "train_span1", "eval": "eval_span1"}
  cache = str(tmp_path / "cache")
  args = (["train_span1"], ["eval_span1"], [("leak", "warn")], cache)
  first = _examples(tmp_path / "run1", rows, names)
  _run(tmp_path, first, *args, execution=1)
  # The next run's: the same eval file, a train file with fewer records.
  shutil.copytree(tmp_path / "run1", tmp_path / "run2")
  shutil.rmtree(tmp_path / "run2" / "Split-train_span1")
  write_rows(rows["train"][:20], str(tmp_path / "run2" / "Split-train_span1"), "data")
  second = standard_artifacts.Examples()
  second.uri, second.split_names = str(tmp_path / "run2"), first.split_names
  again = json.loads(_run(tmp_path, second, *args, execution=2).read())
  assert (again["files"], again["reused"]) == (2, 1), again
  assert again["images"]["train_span1"] == 20, again["images"]


# A table: the same step runs the row check (rows.py), a row's features
# (the label left out) its digest, no thumbnails.
TABLE = {"name": "table", "path": "", "data": {"root": ""},
         "label": {"name": "label", "kind": "classes", "num_classes": 2},
         "features": [{"name": "x", "kind": "numeric"},
                      {"name": "colour", "kind": "categorical"}]}


def _table_rows():
  rows = [{"x": [float(i)], "colour": [b"red" if i % 2 else b"blue"], "label": [i % 2]}
          for i in range(60)]
  # Planted: eval's last row repeats train row 3's features (under its label).
  return {"train": rows[:40], "eval": rows[40:] + [dict(rows[3])]}


def test_a_table_gets_the_row_check_and_a_train_row_in_eval_is_refused(tmp_path, capsys):
  examples = _examples(tmp_path / "examples", _table_rows(), {"train": "train", "eval": "eval"})
  props = {"declaration": json.dumps(TABLE), "train_args": json.dumps({"splits": ["train"]}),
           "eval_splits": json.dumps(["eval"]), "cache_dir": ""}
  out, page = standard_artifacts.String(), ui_artifacts.HTML()
  out.uri, page.uri = str(tmp_path / "result" / "value"), str(tmp_path / "page" / "value")
  for artifact in (out, page):
    os.makedirs(os.path.dirname(artifact.uri))
  Executor().Do({"examples": [examples]}, {"result": [out], "page": [page]}, props)
  result = json.loads(out.read())
  assert result["checks"] == "row check" and result["images"] == {"train": 40, "eval": 21}
  found = {f["kind"]: f for f in result["findings"]}
  assert (found["leak"]["decision"], found["leak"]["count"]) == ("stop", 1), found
  assert {(m["split"], m["index"]) for m in found["leak"]["examples"][0]} == {
      ("train", 3), ("eval", 20)}, found["leak"]
  assert check_result.refusal(result) == (
      "the row check stops the run before Transform: leak: 1 eval rows that repeat a train "
      "row (the same features) (the declaration's image_checks: sets each kind to stop, "
      "warn or ignore)")
  assert "<h2>Row check</h2>" in page.read() and "<img" not in page.read()
  assert "row check: leak: 1 eval rows that repeat a train row" in capsys.readouterr().out

"""Span windows: which folders a run reads, and declaration errors."""

import copy

import pytest

from dataset import declaration, spans
from dataset.declaration import Data
from tests.conftest import digits_raw, write_declaration

SPLITS = {"train": "span-{SPAN}/train/*.gz", "eval": "span-{SPAN}/eval/*.gz"}


def touch(root, *paths):
  for path in paths:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(b"")


def test_the_last_spans_are_read_each_as_splits_of_its_own(tmp_path):
  touch(tmp_path, *[f"span-{s}/{split}/a.gz" for s in (1, 2, 10) for split in ("train", "eval")])
  window = spans.resolve(Data(str(tmp_path), splits=SPLITS, window=2))
  assert window.spans == ((2, None), (10, None))  # numerically, not as text
  assert window.inputs == {"train_span2": "span-2/train/*.gz", "eval_span2": "span-2/eval/*.gz",
                           "train_span10": "span-10/train/*.gz",
                           "eval_span10": "span-10/eval/*.gz"}
  assert window.train_splits == ("train_span2", "train_span10")
  assert window.eval_splits == ("eval_span2", "eval_span10")
  assert window.describe() == "spans 2, 10"


def test_a_span_counts_once_every_split_has_files(tmp_path):
  touch(tmp_path, "span-1/train/a.gz", "span-1/eval/a.gz", "span-2/train/a.gz")
  window = spans.resolve(Data(str(tmp_path), splits=SPLITS))
  assert window.spans == ((1, None),) and window.describe() == "span 1"
  assert window.notes == ("skipped span 2: not every split has files yet",)


def test_a_malformed_span_folder_is_skipped_and_named(tmp_path):
  touch(tmp_path, *[f"span-{s}/{split}/a.gz" for s in ("1", "2b") for split in ("train", "eval")])
  window = spans.resolve(Data(str(tmp_path), splits=SPLITS))
  assert window.spans == ((1, None),)
  assert window.notes == tuple(
      f"skipped {tmp_path}/span-2b/{split}: its span (or version) is not a number"
      for split in ("eval", "train"))


def test_a_window_larger_than_the_spans_reads_what_is_there_and_says_so(tmp_path):
  touch(tmp_path, *[f"span-{s}/{split}/a.gz" for s in (1, 2) for split in ("train", "eval")])
  window = spans.resolve(Data(str(tmp_path), splits=SPLITS, window=5))
  assert window.describe() == "spans 1, 2"
  assert window.notes == ("window 5: only 2 span(s) found, reading 1, 2",)


def test_the_newest_version_of_each_span(tmp_path):
  touch(tmp_path, *[f"span-{s}/version-{v}/{split}/a.gz" for s, v in ((1, 1), (1, 3), (2, 1))
                    for split in ("train", "eval")])
  data = Data(str(tmp_path), window=2, splits={
      k: v.replace("span-{SPAN}/", "span-{SPAN}/version-{VERSION}/") for k, v in SPLITS.items()})
  window = spans.resolve(data)
  assert window.spans == ((1, 3), (2, 1))
  assert window.inputs["train_span1_v3"] == "span-1/version-3/train/*.gz"


def test_data_without_spans_keeps_train_and_eval(tmp_path):
  window = spans.resolve(Data(str(tmp_path), splits={"train": "t/*", "eval": "e/*"}))
  assert window.spans == () and window.train_splits == ("train",)
  assert window.describe() == "all data"


def test_no_span_folder_is_an_error_naming_the_pattern(tmp_path):
  with pytest.raises(declaration.DeclarationError) as e:
    spans.resolve(Data(str(tmp_path), splits=SPLITS), "my.yaml")
  assert str(e.value).startswith("my.yaml: field 'data': expected span folders matching")
  assert "span-{SPAN}/train/*.gz" in str(e.value) and str(e.value).endswith("found none")


@pytest.mark.parametrize("data, expected", [
    ({"splits": {"train": "train/*", "eval": "eval/*"}, "window": 2},
     "'data.window': expected 1, unless every split's pattern has {SPAN}"),
    ({"pattern": "span-{SPAN}/*", "window": 3},
     "'data.window': expected 1 with 'pattern' (a window of several spans needs "
     "pre-split train and eval folders"),
    ({"splits": SPLITS, "window": 0}, "'data.window': expected an integer >= 1, found 0"),
])
def test_bad_windows_are_named(tmp_path, data, expected):
  raw = copy.deepcopy(digits_raw())
  raw["data"] = {"root": str(tmp_path), **data}
  raw.pop("schema")
  with pytest.raises(declaration.DeclarationError) as e:
    declaration.load(write_declaration(tmp_path, raw))
  assert expected in str(e.value)


@pytest.mark.parametrize("span, version", [(4, None), (12, 2)])
def test_a_windows_split_names_give_back_their_span(span, version):
  for split in ("train", "eval"):
    name = split + spans.split_suffix(span, version)
    assert spans.span_of_split(name) == span and spans.is_span_split(name), name
  assert spans.span_of_split("train") is None and not spans.is_span_split("train")

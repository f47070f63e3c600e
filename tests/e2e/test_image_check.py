"""The image check as a step of local runs over spans (issue 55): an eval
picture that repeats a train picture stops the run by default, at the gate
before Transform, with its line; a new span's eval repeating an older span's
training is found too, the older span's fingerprints read from the first
run's, not computed again; the report shows the pairs as thumbnails in a
real browser.

Span 1 plants an eval copy (re-encoded at quality 60) of a train picture;
span 2 an eval copy (cropped by 4 pixels) of another of span 1's train
pictures. The first run reads span 1 alone (window 1); the second, spans 1
and 2 (window 2).
"""

import os

import pytest
import yaml

from dataset.convert.rows import write_rows
from store.metadata import store as st
from tests.planted_images import VARIANTS, encode, picture
from tests.runs import run_local

pytestmark = pytest.mark.e2e


def _write_span(root: str, span: int, seeds: range, evals: range, planted: bytes) -> None:
  rows = {"train": [{"image": [encode(picture(s))], "label": [s % 3]} for s in seeds],
          "eval": [{"image": [encode(picture(s))], "label": [s % 3]} for s in evals]
          + [{"image": [planted], "label": [0]}]}
  for split, split_rows in rows.items():
    write_rows(split_rows, os.path.join(root, f"span-{span}", split), "p")


def _declaration(folder, data: str, window: int) -> str:
  raw = {"name": "photos", "label": {"name": "label", "num_classes": 3},
         "data": {"root": data, "window": window,
                  "splits": {"train": "span-{SPAN}/train/*.gz",
                             "eval": "span-{SPAN}/eval/*.gz"}},
         "features": {"image": {"kind": "image", "encoding": "jpeg", "height": 96,
                                "width": 96, "channels": 3}}}
  path = os.path.join(str(folder), f"window{window}.yaml")
  with open(path, "w") as f:
    yaml.safe_dump(raw, f)
  return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  folder = tmp_path_factory.mktemp("image_check")
  data, out = str(folder / "data"), str(folder / "out")
  _write_span(data, 1, range(0, 30), range(30, 40),
              VARIANTS["quality60"](picture(0), None))
  first = run_local("--dataset", _declaration(folder, data, 1), "--output-dir", out)
  _write_span(data, 2, range(40, 70), range(70, 80),
              VARIANTS["cropped4"](picture(1), None))
  second = run_local("--dataset", _declaration(folder, data, 2), "--output-dir", out)
  return {"first": first, "second": second, "out": out,
          "metadata": os.path.join(out, "photos", "metadata.sqlite")}


def _report(stdout: str) -> str:
  (line,) = [x for x in stdout.splitlines() if x.startswith("report: ")]
  return line[len("report: "):]


def test_a_leak_stops_the_run_before_transform_naming_the_kind_and_count(runs):
  code, out, err = runs["first"]
  assert code == 1, err[-3000:]
  assert "image check: leak: 1 eval images that repeat a train image" in out, out
  assert "[stop]" in out, out
  assert ("error: the image check stops the run before Transform: leak: 1 eval images "
          "that repeat a train image") in err, err[-3000:]
  assert "no model pushed" in err, err[-3000:]
  store = st.open_store(runs["metadata"])
  (first, second) = st.runs(store, "photos")
  assert "Transform" not in first.nodes and "Trainer" not in first.nodes, first.nodes
  states = {node: first.nodes[node].state for node in ("ImageCheck", "AnomaliesGate")}
  assert states == {"ImageCheck": "COMPLETE", "AnomaliesGate": "FAILED"}, states
  assert not os.path.exists(os.path.join(runs["out"], "photos", "serving")) or not [
      v for v in os.listdir(os.path.join(runs["out"], "photos", "serving")) if v.isdigit()]


def test_a_new_spans_eval_repeating_an_older_spans_training_stops_the_next_run(runs):
  code, out, err = runs["second"]
  assert code == 1, err[-3000:]
  # Both leaks are in this window: span 1's own, and span 2's into span 1.
  assert "image check: leak: 2 eval images that repeat a train image" in out, out
  assert "stops the run before Transform: leak: 2 eval images" in err, err[-3000:]


def test_the_report_shows_the_pairs_in_a_browser_and_the_older_spans_prints_reused(runs):
  from tests.browser import Page
  with Page(_report(runs["second"][1])) as page:
    text = page.evaluate("document.getElementById('image_check').innerText")
    images = page.evaluate("[...document.querySelectorAll('#image_check img')]"
                           ".map(i => [i.alt, i.complete, i.naturalWidth])")
    groups = page.evaluate("[...document.querySelectorAll('#image_check .group')].map("
                           "g => [...g.querySelectorAll('figcaption')].map(c => c.innerText"
                           ".split(' · ')[0]))")
    errors = page.errors
  assert errors == [], errors
  assert "the fingerprints of 2 of 4 files reused from earlier runs" in text, text
  assert images and all(complete and width == 64 for _, complete, width in images), images
  pairs = [sorted(set(g)) for g in groups]
  assert ["eval_span1", "train_span1"] in pairs and ["eval_span2", "train_span1"] in pairs, \
      groups

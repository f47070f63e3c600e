"""components/tuner/record.py: whether a run searches again or reuses the
latest search, and why in words, on searches written to a serving dir in
tmp_path as the Tuner writes them."""

import dataclasses
import os

from components.tuner import record
from dataset.tuning import Dimension, Tuning

TUNING = Tuning("random", 4, "accuracy", 20, 2, (
    Dimension("learning_rate", "log_uniform", (1e-3, 1e-2)),))


def _finished(serving_dir: str, tuning: Tuning, span, when: float, tune: str = "") -> dict:
  """A finished search, as components/tuner/tuner.py records it."""
  search = {"id": record.search_id(tuning, span, tune), "finished_unix": when,
            "finished": f"{when:.0f}", "span": span, "objective": tuning.objective,
            "best_score": 0.9, "tuning": record.searched(tuning),
            "trials": [{"trial": "00", "score": 0.9}, {"trial": "01", "score": 0.8}]}
  return {**search, "folder": record.save(serving_dir, search, {"learning_rate": 0.002})}


def test_a_run_searches_when_asked_when_none_exists_and_when_tuning_changed():
  found = {"id": "span1-abc", "span": 1, "tuning": record.searched(TUNING),
           "finished": "then", "objective": "accuracy", "best_score": 0.9, "trials": [{}]}
  assert record.plan(TUNING, found, 2, tune="1") == (
      record.search_id(TUNING, 2, "1"), "a new search was asked for (--tune)")
  assert record.plan(TUNING, None, 2) == (record.search_id(TUNING, 2),
                                           "no earlier search for this pipeline")
  wider = dataclasses.replace(TUNING, max_trials=8)
  assert record.plan(wider, found, 2) == (
      record.search_id(wider, 2), "the declaration's tuning: changed since search span1-abc")
  # When to search again is no change in what a search finds.
  assert record.plan(dataclasses.replace(TUNING, every=3), found, 2)[0] == "span1-abc"


def test_a_run_searches_again_once_the_newest_span_is_every_spans_past():
  found = {"id": "span1-abc", "span": 1, "tuning": record.searched(TUNING),
           "finished": "then", "objective": "accuracy", "best_score": 0.9, "trials": [{}]}
  assert record.plan(TUNING, found, 2) == (
      "span1-abc", "reusing search span1-abc (then, span 1): best accuracy 0.9000 after "
      "1 trials")
  assert record.plan(TUNING, found, 3) == (
      record.search_id(TUNING, 3),
      "span 3 is 2 spans past search span1-abc (span 1); tuning.every is 2")
  never = dataclasses.replace(TUNING, every=0)
  assert record.plan(never, {**found, "tuning": record.searched(never)}, 9)[0] == "span1-abc"


def test_a_run_reuses_the_search_that_finished_last(tmp_path):
  serving_dir = str(tmp_path)
  _finished(serving_dir, TUNING, 1, when=200.0)
  older = _finished(serving_dir, TUNING, 1, when=100.0, tune="again")
  newest = _finished(serving_dir, TUNING, 2, when=300.0)
  os.makedirs(os.path.join(serving_dir, "tuning", "span3-unfinished"))  # no search.json
  search, found, why = record.choose(TUNING, serving_dir, 2)
  assert (search, found["folder"]) == (newest["id"], newest["folder"])
  assert why == (f"reusing search {newest['id']} (300, span 2): best accuracy 0.9000 "
                 "after 2 trials")
  # The search chosen when the run started is the one its Tuner reuses.
  search, found, _ = record.choose(TUNING, serving_dir, 2, search=older["id"])
  assert (search, found["folder"]) == (older["id"], older["folder"])


def test_a_run_that_asked_for_a_search_runs_it_even_when_one_exists(tmp_path):
  serving_dir = str(tmp_path)
  _finished(serving_dir, TUNING, 2, when=100.0)
  assert record.choose(TUNING, serving_dir, 2, tune="1") == (
      record.search_id(TUNING, 2, "1"), None, "a new search was asked for (--tune)")
  # Asked again with the same words, after that search finished: searched again.
  _finished(serving_dir, TUNING, 2, when=200.0, tune="1")
  assert record.choose(TUNING, serving_dir, 2, tune="1") == (
      record.search_id(TUNING, 2, "1"), None, "a new search was asked for (--tune)")
  # Asked for when the run started (the local runner's --tune is in the id).
  asked = record.search_id(TUNING, 2, "at-start")
  assert record.choose(TUNING, serving_dir, 2, search=asked) == (
      asked, None, f"a new search was asked for when the run started (--tune): {asked}")


def test_the_first_run_searches(tmp_path):
  assert record.latest(str(tmp_path / "serving")) is None
  assert record.choose(TUNING, str(tmp_path / "serving"), None) == (
      record.search_id(TUNING, None), None, "no earlier search for this pipeline")
  assert record.search_id(TUNING, None).startswith("all-")

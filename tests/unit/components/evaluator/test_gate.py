"""components/evaluator/gate.py on many simulated evaluations: what its rules cost a
stationary stream, and what they catch.

Each evaluation is two models as good as each other (independent errors at
the same rate) on small slices, with intervals computed as TFMA's
jackknife computes them (20 buckets, t with 19 degrees of freedom around
the buckets' mean: tensorflow_model_analysis/evaluators/jackknife.py and
utils/math_util.py). tests/unit/components/evaluator/test_evaluator_slices.py runs TFMA itself on one
evaluation; here a thousand show the rates.
"""

import numpy as np
import pytest
from scipy import stats

from components.evaluator import gate
from dataset.thresholds import Evaluation, Slice

KEY = "sparse_categorical_accuracy"
SLICES = ("square", "tall", "wide")


def _jackknife(candidate: np.ndarray, served: np.ndarray, buckets: np.ndarray) -> dict:
  """A slice's entry of evaluation.load: values and 95% intervals."""
  def interval(values):
    leave_out = np.array([values[buckets != b].mean() for b in range(20)])
    mean = leave_out.mean()
    error = np.sqrt(19 / 20 * ((leave_out - mean) ** 2).sum())
    t = stats.t.ppf(0.975, 19)
    return (mean - t * error, mean + t * error)

  return {"candidate": {KEY: candidate.mean(), "example_count": len(candidate)},
          "baseline": {KEY: served.mean()},
          "change": {KEY: candidate.mean() - served.mean()},
          "candidate interval": {KEY: interval(candidate)},
          "change interval": {KEY: interval(candidate - served)}}


def _evaluation(rng, per_slice: int, accuracy=0.9, collapsed: str = "") -> dict:
  found, everything = {}, []
  for name in SLICES:
    served = (rng.random(per_slice) < accuracy).astype(float)
    rate = 0.15 if name == collapsed else accuracy
    candidate = (rng.random(per_slice) < rate).astype(float)
    buckets = rng.integers(0, 20, per_slice)
    found[(("shape", name),)] = _jackknife(candidate, served, buckets)
    everything.append((candidate, served, buckets))
  found[()] = _jackknife(*(np.concatenate(parts) for parts in zip(*everything)))
  return found


RULES = Evaluation("accuracy", threshold=0.5, max_change=0.01, slices=(Slice("shape"),))


def _refused(found: dict, rules: Evaluation) -> bool:
  whole, rows = gate.judge(found, rules, served=True)
  return bool([r for r in rows if r["failure"]])


@pytest.mark.parametrize("per_slice", [30, 48, 80])
def test_a_collapsed_small_slice_is_refused_every_time(per_slice):
  """A slice that fell from 0.9 to 0.15 on its 30 to 80 examples: refused in
  each of 50 evaluations, the line ending with its count; the two that did
  not move, seldom (each draw a stationary pair, as above)."""
  rng = np.random.default_rng(per_slice)
  false_refusals = 0
  for _ in range(50):
    found = _evaluation(rng, per_slice, collapsed="wide")
    _, rows = gate.judge(found, RULES, served=True)
    by_name = {r["slice"]: r for r in rows}
    wide = by_name["shape=wide"]
    assert wide["failure"].endswith(f"; {per_slice} examples)"), wide["note"]
    false_refusals += sum(bool(by_name[s]["failure"]) for s in ("shape=square", "shape=tall"))
  assert false_refusals <= 5, f"{false_refusals} of 100 stationary slices refused"


@pytest.mark.parametrize("tfma_blessed, on, failures, expected", [
    (True, "tfma", [], True),                    # TFMA blessed, nothing refused
    (True, "tfma", ["slice s=a ..."], False),    # a slice refuses
    (False, "tfma", ["accuracy value ..."], False),  # TFMA's own refusal counts
    (False, "tfma", [], False),                  # TFMA refused without a line: it stands
    (False, "evidence", [], True),               # a small whole passed on its evidence
    (False, "evidence", ["the whole ..."], False),
])
def test_the_verdict_is_tfmas_unless_the_gate_decides(tfma_blessed, on, failures, expected):
  assert gate.blessed(tfma_blessed, {"whole": {"on": on}, "failures": failures}) is expected


def test_a_judgement_from_before_the_rules_keeps_tfmas_verdict():
  assert gate.blessed(False, {"failures": []}) is False
  assert gate.blessed(True, {"failures": []}) is True


def test_a_value_interval_stays_within_what_accuracy_can_take():
  """A slice of 30 where all but one is right: TFMA's interval (the mean
  +- t * error) runs past 1, and widening it for the family runs further;
  the row says 1.0000 at most, and 0 at least for one nearly all wrong."""
  rng = np.random.default_rng(7)
  buckets = rng.integers(0, 20, 30)
  right, wrong = np.ones(30), np.zeros(30)
  right[0], wrong[0] = 0.0, 1.0
  found = {(("shape", "square"),): _jackknife(right, right, buckets),
           (("shape", "tall"),): _jackknife(wrong, wrong, buckets)}
  found[()] = _jackknife(np.concatenate([right, wrong]), np.concatenate([right, wrong]),
                         np.concatenate([buckets, buckets]))
  assert found[(("shape", "square"),)]["candidate interval"][KEY][1] > 1  # TFMA's, unclipped
  rules = Evaluation("accuracy", threshold=0.5, max_change=0.01, slices=(Slice("shape"),),
                     min_slice_examples=100)
  _, rows = gate.judge(found, rules, served=True)
  square, tall = sorted(rows, key=lambda r: r["slice"])
  assert square["on"] == "evidence" and square["value_high"] == 1.0, square
  assert 0.8 < square["value_low"] < 1.0, square
  assert tall["value_low"] == 0.0 and 0.0 < tall["value_high"] < 0.2, tall
  assert "0.0000 to" in tall["failure"], tall["failure"]  # refused, its interval from 0

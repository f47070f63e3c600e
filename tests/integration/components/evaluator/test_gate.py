"""The gate's family error measured on 1,000 simulated stationary
evaluations of small slices (docs/declaration.md), with and without the
widening for the slices judged."""

import numpy as np

from components.evaluator import gate
from dataset.thresholds import Evaluation
from tests.unit.components.evaluator.test_gate import RULES, _evaluation, _refused


def test_small_slices_of_a_stationary_stream_refuse_no_more_than_the_family_error():
  """The slices' own refusals, on a thousand retrains where nothing moved:
  within 5% in all (the family's error) with a margin for the draw; on
  the estimate instead, as if the slices were large, most retrains are
  refused on noise (the reason small slices are judged on evidence)."""
  rng = np.random.default_rng(0)
  evaluations = [_evaluation(rng, per_slice=30) for _ in range(1000)]
  on_evidence = sum(_refused(f, RULES) for f in evaluations) / len(evaluations)
  on_estimate = sum(_refused(f, Evaluation(**{**RULES.__dict__, "min_slice_examples": 1}))
                    for f in evaluations) / len(evaluations)
  assert on_evidence <= 0.05 + 0.02, f"{on_evidence:.3f} of stationary retrains refused"
  assert on_estimate > 0.5, f"on the estimate, {on_estimate:.3f} refused"


def test_widening_for_the_slices_judged_keeps_the_family_error_down(monkeypatch):
  """Each interval alone at 95% (no widening) refuses more often than the
  widened family: the multiplicity control is what keeps the rate low."""
  rng = np.random.default_rng(1)
  evaluations = [_evaluation(rng, per_slice=30) for _ in range(1000)]
  widened = sum(_refused(f, RULES) for f in evaluations)
  # The family of four (the whole and three slices) as four 95% intervals.
  monkeypatch.setattr(gate, "FAMILY_ERROR", 0.05 * 4)
  unwidened = sum(_refused(f, RULES) for f in evaluations)
  assert unwidened > widened * 1.5, (unwidened, widened)

"""The Evaluator's gate: the whole eval split and each declared slice,
judged on what their evidence can show.

A row (the whole, or a slice) with at least `min_slice_examples` eval
examples is judged on the change's estimate or on its interval, as
`max_change_on` says. A smaller row is judged on its evidence: refused only
when the whole interval of its change lies beyond `max_change`, or the whole
interval of its value beyond the threshold; otherwise it passes, and its
line says what size of drop it could have shown. A slice is never waved
through for being small: a segment of 48 examples that fell from 0.90 to
0.15 is refused (issue 41), one that moved within its noise is not.

Each interval judged counts as a test, and many slices are many chances of
refusing a good model on noise. So every interval judged in one evaluation
is widened to a family confidence of 95% (Bonferroni: each at
1 - 0.05 / m for m intervals), from the Student t that TFMA's jackknife
gives it (`DEGREES_OF_FREEDOM`).
"""

import math
from typing import Dict, List, Optional, Tuple

from scipy import stats

from dataset import metrics
from dataset.thresholds import Evaluation

FAMILY_ERROR = 0.05  # the chance of any false refusal among the intervals judged
# TFMA's jackknife (0.47, confidence_intervals_util): 20 buckets, an interval
# of mean +- t(0.975, 19) * standard error around the unsampled value.
DEGREES_OF_FREEDOM = 19
_TFMA_T = stats.t.ppf(0.975, DEGREES_OF_FREEDOM)

Found = Dict[tuple, Dict[str, dict]]  # evaluation.load's


def judge(found: Found, rules: Evaluation, served: bool) -> Tuple[dict, List[dict]]:
  """(the whole's row, each declared slice's row), judged by `rules`.

  A row: `name`, `slice`, `examples`, `value` and `served` (the served
  model's, on the same examples), `value_low`/`value_high` and
  `change_low`/`change_high` (the intervals judged, widened), `confidence`
  (theirs), `threshold`, `max_change`, `on` (`estimate`, `interval` or
  `evidence`, what judged it; `tfma` for a whole TFMA judges), `judged`
  (False when there was nothing to judge it on), `failure` (the refusal,
  "" when it passes) and `note` (a small row's line when it passes).
  `served`: whether a served model was compared with.
  """
  metric = metrics.named(rules.metric)
  sliced = {s.feature: s for s in rules.slices}
  whole = _row("the whole", found.get((), {}), rules.threshold, rules.max_change, metric)
  rows = []
  for key, models in sorted(found.items(), key=lambda kv: str(kv[0])):
    if len(key) == 1 and key[0][0] in sliced:
      (feature, value), = key
      rows.append(_row(f"slice {feature}={value}", models,
                       *sliced[feature].rule(str(value), rules), metric))
  for row in [whole] + rows:
    row["on"] = ("evidence" if row["examples"] < rules.min_slice_examples
                 else rules.max_change_on)
  if whole["on"] == "estimate" or (whole["on"] == "interval" and not served):
    whole["on"] = "tfma"  # TFMA's thresholds judge it, on the estimate
  if whole["on"] == "evidence" and whole["value_low"] is None:
    whole["on"] = "tfma"  # no interval (none computed without a served model)
  family = [r for r in [whole] + rows if r["on"] in ("interval", "evidence")]
  for row in family:
    _widen(row, len(family), metric)
  for row in [whole] + rows:
    row["failure"], row["note"] = _verdict(row, metric, served)
  return whole, rows


def _row(name: str, models: dict, threshold: float, max_change: float,
         metric: metrics.Metric) -> dict:
  candidate, baseline = models.get("candidate", {}), models.get("baseline", {})
  value_low, value_high = _interval(models, "candidate", metric)
  change_low, change_high = _interval(models, "change", metric)
  return {"slice": name.removeprefix("slice "), "name": name,
          "examples": int(candidate.get("example_count", 0)),
          "value": candidate.get(metric.tfma_key), "served": baseline.get(metric.tfma_key),
          "value_low": value_low, "value_high": value_high,
          "change_low": change_low, "change_high": change_high, "confidence": 0.95,
          "threshold": threshold, "max_change": max_change, "failure": "", "note": "",
          "judged": True}


def _interval(models: dict, model: str, metric: metrics.Metric):
  low, high = models.get(f"{model} interval", {}).get(metric.tfma_key, (None, None))
  # A slice absent from some jackknife buckets can come back without bounds.
  if low is None or not (math.isfinite(low) and math.isfinite(high)):
    return None, None
  return low, high


def _widen(row: dict, family: int, metric: metrics.Metric) -> None:
  """Widens the row's 95% intervals to 1 - FAMILY_ERROR / family each; the
  value's stays within the values the metric can take."""
  confidence = 1 - FAMILY_ERROR / family
  scale = stats.t.ppf(1 - (1 - confidence) / 2, DEGREES_OF_FREEDOM) / _TFMA_T
  for kind in ("value", "change"):
    low, high = row[f"{kind}_low"], row[f"{kind}_high"]
    if low is not None:
      middle, half = (low + high) / 2, (high - low) / 2 * scale
      row[f"{kind}_low"], row[f"{kind}_high"] = middle - half, middle + half
  row["value_low"], row["value_high"] = metric.clipped(row["value_low"], row["value_high"])
  row["confidence"] = confidence


def _verdict(row: dict, metric: metrics.Metric, served: bool) -> Tuple[str, str]:
  """(why the row refuses the model, "" if it does not; a small row's line)."""
  value, was = row["value"], row["served"]
  if value is None or row["on"] == "tfma":
    return "", ""
  sign = 1 if metric.higher_is_better else -1
  worse = "<" if sign > 0 else ">"
  bound = -sign * row["max_change"]
  has_change = served and was is not None and row["change_low"] is not None
  level = f"{row['confidence'] * 100:.4g}% interval"
  change = (f"change {value - was:+.4f}, {level} {row['change_low']:+.4f} to "
            f"{row['change_high']:+.4f}" if has_change else "")
  size = f"{row['examples']} examples"
  head = f"{row['name']} {metric.name} {value:.4f}"
  against = f", served {was:.4f}" if was is not None and served else ""
  if row["on"] == "evidence":
    if row["value_low"] is None:
      row["judged"] = False
      return "", f"{head}{against} ({size}): no interval to judge it on, reported only"
    reasons = []
    best_value = row["value_high"] if sign > 0 else row["value_low"]
    if sign * (best_value - row["threshold"]) < 0:
      reasons.append(f"{level} of the value {row['value_low']:.4f} to "
                     f"{row['value_high']:.4f}: all of it {worse} {row['threshold']:g} "
                     "(the threshold)")
    if has_change and sign * _best(row, sign) < -row["max_change"] - 1e-10:
      reasons.append(f"{change}: all of it {worse} {bound:+g}")
    if reasons:
      return f"{head}{against} ({'; '.join(reasons)}; {size})", ""
    return "", f"{head}{against} ({size}): passes on its evidence; " + _could_show(
        row, change, has_change)
  reasons = []
  if row["name"] != "the whole" and sign * (value - row["threshold"]) < 0:
    reasons.append(f" {worse} {row['threshold']:g} (the threshold)")
  if has_change and row["on"] == "interval":
    # The candidate's side of the interval: refused only if even it is worse.
    if sign * _best(row, sign) < -row["max_change"] - 1e-10:
      reasons.append(f", served {was:.4f} ({change}: all of it {worse} {bound:+g})")
  elif served and was is not None and sign * (value - was) < -row["max_change"] - 1e-10:
    reasons.append(f", served {was:.4f} (change {value - was:+.4f} {worse} {bound:+g})")
  return (head + "".join(reasons) + f" ({size})" if reasons else ""), ""


def _best(row: dict, sign: int) -> float:
  """The change interval's end on the candidate's side."""
  return row["change_high"] if sign > 0 else row["change_low"]


def _could_show(row: dict, change: str, has_change: bool) -> str:
  """What a small row's evidence could have refused: the smallest drop (or
  rise, for an error) whose interval, this wide, would lie beyond the bound."""
  if has_change:
    half = (row["change_high"] - row["change_low"]) / 2
    return (f"{change}; only a change of more than {row['max_change'] + half:.2f} "
            "for the worse would have shown")
  half = (row["value_high"] - row["value_low"]) / 2
  return (f"{row['confidence'] * 100:.4g}% interval of the value {row['value_low']:.4f} to "
          f"{row['value_high']:.4f}; only a value more than {half:.2f} past the threshold "
          f"{row['threshold']:g} would have shown")


def failures(whole: dict, rows: List[dict]) -> List[str]:
  """The refusals made here, the whole's first."""
  return [r["failure"] for r in [whole] + rows if r["failure"]]


def waives_tfma(whole: dict) -> bool:
  """Whether the whole was judged here on its evidence, so TFMA's estimate
  of it (its thresholds) decides nothing."""
  return whole["on"] == "evidence"


def blessed(tfma_blessed: bool, judged: dict) -> bool:
  """The verdict: TFMA's, unless a failure counts (the gate's, or TFMA's
  own: the judgement's `failures`), or a small whole was judged here on its
  evidence in TFMA's stead. A judgement without `whole` (a pipeline built
  before the rules) leaves TFMA's verdict as it is."""
  waived = "whole" in judged and waives_tfma(judged["whole"])
  return not judged["failures"] and (tfma_blessed or waived)


def small_lines(whole: Optional[dict], rows: List[dict]) -> List[str]:
  """The lines of the small rows that passed, for the run's last lines."""
  return [r["note"] for r in ([whole] if whole else []) + rows if r.get("note")]


def verdict_words(row: dict) -> str:
  """A row's verdict as the report and the model card show it."""
  if row["failure"] or row.get("note"):
    return row["failure"] or row["note"]
  # A judgement written before small slices were judged on their evidence.
  return "passes" if row["judged"] else "too few examples to judge: reported only"

"""What a run holds its model and data to, as the declaration says it:
`evaluation:` (what blesses a model), `drift:` (how far a new span may
move) and `serving:` (what a model must meet to be served). Their types,
and their parsing for dataset/declaration.py.
"""

import dataclasses
from typing import Any, Mapping, Optional, Tuple

from dataset import metrics
from dataset.fields import MISSING, FieldReader

# Fewer eval examples than this in a slice (or the whole): it is judged on
# its evidence, its intervals, not on the estimate (components/evaluator/gate.py). At
# 100, one example moves a slice's accuracy by 1 point and the 95% interval
# of an accuracy near 0.9 is about +-0.06: a gate on the estimate of smaller
# slices refuses good models on noise.
MIN_SLICE_EXAMPLES = 100
CHANGE_MEASURES = ("estimate", "interval")  # what `max_change` is held to


@dataclasses.dataclass(frozen=True)
class Slice:
  """A feature whose values (categorical) or buckets (numeric) are slices,
  each judged like the whole.

  Attributes:
    feature: a declared categorical feature, or a numeric one of length 1.
    buckets: numeric only: the boundaries, ascending; [18, 65] makes the
      slices [-inf, 18), [18, 65) and [65, inf).
    threshold, max_change: this feature's slices' own, instead of the
      whole's (None: the whole's).
    values: (value, threshold, max_change) for single slices (a category,
      or a bucket as named above); None keeps the feature's.
  """
  feature: str
  buckets: Tuple[float, ...] = ()
  threshold: Optional[float] = None
  max_change: Optional[float] = None
  values: Tuple[Tuple[str, Optional[float], Optional[float]], ...] = ()

  def bucket_names(self) -> Tuple[str, ...]:
    edges = ["-inf", *(f"{b:g}" for b in self.buckets), "inf"]
    return tuple(f"[{lo}, {hi})" for lo, hi in zip(edges, edges[1:]))

  def rule(self, value: str, whole: "Evaluation") -> Tuple[float, float]:
    """(threshold, max_change) that slice `value` is judged by."""
    threshold = whole.threshold if self.threshold is None else self.threshold
    max_change = whole.max_change if self.max_change is None else self.max_change
    for name, t, m in self.values:
      if name == value:
        threshold = threshold if t is None else t
        max_change = max_change if m is None else m
    return threshold, max_change


@dataclasses.dataclass(frozen=True)
class Evaluation:
  """What blesses a model: a metric, its threshold, and the largest change
  for the worse against the served model; the same for each slice.

  For metrics where higher is better (accuracy, auc) `threshold` is a lower
  bound and `max_change` the largest drop; for rmse and mae an upper bound
  and the largest rise.

  `max_change_on` says what the change is: `estimate`, the difference
  measured on the eval examples; or `interval`, its 95% interval's bound on
  the side of the candidate, so a model is refused only when even that bound
  is worse than `max_change` allows. Both models answer the same examples,
  so the interval is the paired difference's (TFMA's jackknife).
  """
  metric: str = "accuracy"
  threshold: float = 0.9
  max_change: float = 0.01
  slices: Tuple[Slice, ...] = ()
  min_slice_examples: int = MIN_SLICE_EXAMPLES
  max_change_on: str = "estimate"

  @property
  def higher_is_better(self) -> bool:
    return metrics.named(self.metric).higher_is_better

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "Evaluation":
    """The inverse of `dataclasses.asdict`."""
    slices = tuple(Slice(**{**s, "buckets": tuple(s.get("buckets", ())),
                            "values": tuple(tuple(v) for v in s.get("values", ()))})
                   for s in d.get("slices", ()))
    return cls(**{**d, "slices": slices})


DRIFT_ACTIONS = ("warn", "stop")
# The batch sizes the serving check measures latency at.
SERVING_BATCHES = ("batch_1", "batch_64")


@dataclasses.dataclass(frozen=True)
class Drift:
  """How far the newest span may move from the span before it.

  Attributes:
    categorical: the largest L-infinity distance between the two spans'
      value frequencies (0 to 1) of a categorical feature.
    numeric: the largest Jensen-Shannon divergence (0 to 1) between the two
      spans' histograms of a numeric or sequence feature.
    size: the largest relative change in the number of examples (0.5: from
      half to one and a half times the earlier span's).
    features: (feature, threshold) pairs that override the defaults.
    action: `stop` (the run exits 1 before Transform) or `warn` (it goes on
      and says so at its end).
  """
  categorical: float = 0.1
  numeric: float = 0.1
  size: float = 0.5
  features: Tuple[Tuple[str, float], ...] = ()
  action: str = "warn"

  def threshold(self, feature: str, kind: str) -> float:
    return dict(self.features).get(
        feature, self.categorical if kind == "categorical" else self.numeric)


@dataclasses.dataclass(frozen=True)
class Serving:
  """What the serving check (components/serving_check/serving_check.py) holds a candidate
  model to, beyond answering correctly.

  Attributes:
    p99_ms: (batch, milliseconds) pairs, batch `batch_1` or `batch_64`: the
      largest 99th-percentile latency of `serving_default` at that batch
      size. Empty: latency is measured and reported, never a reason to
      refuse a model.
  """
  p99_ms: Tuple[Tuple[str, float], ...] = ()


def evaluation(r: FieldReader, node: Any, label, features: tuple) -> Evaluation:
  """The `evaluation:` section, for `label` (a dataset.types.Label) and the
  declared `features`."""
  node = r.mapping(node, "evaluation", ("metric", "threshold", "max_change", "slices",
                                        "min_slice_examples", "max_change_on"))
  known = metrics.for_label(label.kind)
  metric = r.get(node, "evaluation", "metric", str, next(iter(known)), tuple(known))
  if metric == "auc" and label.num_classes != 2:
    raise r.fail("evaluation.metric", "accuracy: auc needs exactly 2 classes",
                 f"auc with {label.num_classes} classes")
  if known[metric].higher_is_better:
    threshold = r.get(node, "evaluation", "threshold", (int, float), 0.9)
  elif "threshold" not in node:
    # An error in the label's own units has no default that fits every dataset.
    raise r.fail("evaluation.threshold", f"a number: the largest {metric} a model "
                 "may have and be blessed (a regression label needs one)", MISSING)
  else:
    threshold = r.get(node, "evaluation", "threshold", (int, float))
  max_change = r.get(node, "evaluation", "max_change", (int, float), 0.01)
  if max_change < 0:
    raise r.fail("evaluation.max_change", "a number >= 0", max_change)
  slices = r.get(node, "evaluation", "slices", list, [])
  return Evaluation(metric, float(threshold), float(max_change),
                    tuple(_slice(r, f"evaluation.slices[{i}]", s, features)
                          for i, s in enumerate(slices)),
                    r.get(node, "evaluation", "min_slice_examples", int,
                          MIN_SLICE_EXAMPLES, minimum=1),
                    r.get(node, "evaluation", "max_change_on", str, "estimate",
                          CHANGE_MEASURES))


def _slice(r: FieldReader, field: str, node: Any, features: tuple) -> Slice:
  """One entry of `evaluation.slices`: a feature's name, or a mapping."""
  node = {"feature": node} if isinstance(node, str) else node
  node = r.mapping(node, field, ("feature", "buckets", "threshold", "max_change", "values"))
  name = r.get(node, field, "feature", str)
  sliceable = {f.name: f for f in features
               if f.kind == "categorical" or (f.kind == "numeric" and f.length == 1)}
  if name not in sliceable:
    raise r.fail(f"{field}.feature", "a declared categorical feature, or a numeric one "
                 f"of length 1 ({', '.join(sorted(sliceable)) or 'none declared'})", name)
  buckets = r.get(node, field, "buckets", list, [])
  if sliceable[name].kind == "categorical" and buckets:
    raise r.fail(f"{field}.buckets", f"none: {name} is categorical, sliced by value",
                 buckets)
  if sliceable[name].kind == "numeric" and (
      not buckets or any(isinstance(b, bool) or not isinstance(b, (int, float))
                         for b in buckets) or list(buckets) != sorted(set(buckets))):
    raise r.fail(f"{field}.buckets", f"ascending numbers: {name} is numeric, sliced by "
                 "bucket, e.g. [18, 65]", buckets or MISSING)
  rule = _rule(r, field, node)
  values = r.get(node, field, "values", dict, {})
  overrides = []
  for key, value in values.items():
    where = f"{field}.values.{key}"
    overrides.append((str(key), *_rule(r, where, r.mapping(value, where,
                                                            ("threshold", "max_change")))))
  return Slice(name, tuple(float(b) for b in buckets), *rule, tuple(sorted(overrides)))


def _rule(r: FieldReader, field: str, node: Mapping) -> Tuple[Optional[float],
                                                              Optional[float]]:
  """(threshold, max_change) that a slice entry or one value sets; None: not set."""
  found = []
  for key in ("threshold", "max_change"):
    value = r.get(node, field, key, (int, float), None)
    if value is not None and key == "max_change" and value < 0:
      raise r.fail(f"{field}.max_change", "a number >= 0", value)
    found.append(None if value is None else float(value))
  return found[0], found[1]


def drift(r: FieldReader, node: Any, features: tuple) -> Drift:
  """The `drift:` section; `features` are the declared ones."""
  node = r.mapping(node, "drift", ("categorical", "numeric", "size", "features", "action"))
  bounds = {}
  for key, default in (("categorical", 0.1), ("numeric", 0.1), ("size", 0.5)):
    bounds[key] = r.get(node, "drift", key, (int, float), default)
    if not 0 < bounds[key] <= (1 if key != "size" else 1e9):
      raise r.fail(f"drift.{key}", "a number above 0" + (" and at most 1" if key != "size"
                                                          else ""), bounds[key])
  overrides = r.get(node, "drift", "features", dict, {})
  comparable = {f.name for f in features if f.kind != "image"}
  for name, value in overrides.items():
    if name not in comparable:
      raise r.fail(f"drift.features.{name}", "a declared feature that is not an image "
                   f"({', '.join(sorted(comparable))})", name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
      raise r.fail(f"drift.features.{name}", "a number above 0 and at most 1", value)
  action = r.get(node, "drift", "action", str, "warn", DRIFT_ACTIONS)
  return Drift(float(bounds["categorical"]), float(bounds["numeric"]), float(bounds["size"]),
               tuple(sorted((str(k), float(v)) for k, v in overrides.items())), action)


def serving(r: FieldReader, node: Any) -> Serving:
  """The `serving:` section."""
  node = r.mapping(node, "serving", ("p99_ms",))
  budget = r.mapping(node.get("p99_ms", {}), "serving.p99_ms", SERVING_BATCHES)
  for key, value in budget.items():
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
      raise r.fail(f"serving.p99_ms.{key}", "milliseconds, a number above 0", value)
  return Serving(tuple(sorted((str(k), float(v)) for k, v in budget.items())))


def drift_from_dict(d: Optional[Mapping[str, Any]]) -> Drift:
  """The inverse of `dataclasses.asdict` for a Drift (None: the defaults)."""
  if not d:
    return Drift()
  return Drift(**{**d, "features": tuple(tuple(pair) for pair in d.get("features", ()))})

"""What a run holds its model and data to, as the declaration says it:
`evaluation:` (what blesses a model), `drift:` (how far a new span may
move) and `serving:` (what a model must meet to be served). Their types,
and their parsing for dataset/declaration.py.
"""

import dataclasses
from typing import Any, Mapping, Optional, Tuple

from dataset import metrics
from dataset.fields import MISSING, FieldReader


@dataclasses.dataclass(frozen=True)
class Evaluation:
  """What blesses a model: a metric, its threshold, and the largest change
  for the worse against the served model.

  For metrics where higher is better (accuracy, auc) `threshold` is a lower
  bound and `max_change` the largest drop; for rmse and mae an upper bound
  and the largest rise.
  """
  metric: str = "accuracy"
  threshold: float = 0.9
  max_change: float = 0.01

  @property
  def higher_is_better(self) -> bool:
    return metrics.named(self.metric).higher_is_better


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
  """What the serving check (components/serving_check.py) holds a candidate
  model to, beyond answering correctly.

  Attributes:
    p99_ms: (batch, milliseconds) pairs, batch `batch_1` or `batch_64`: the
      largest 99th-percentile latency of `serving_default` at that batch
      size. Empty: latency is measured and reported, never a reason to
      refuse a model.
  """
  p99_ms: Tuple[Tuple[str, float], ...] = ()


def evaluation(r: FieldReader, node: Any, label) -> Evaluation:
  """The `evaluation:` section, for `label` (a dataset.types.Label)."""
  node = r.mapping(node, "evaluation", ("metric", "threshold", "max_change"))
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
  return Evaluation(metric, float(threshold), float(max_change))


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

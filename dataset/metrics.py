"""The metrics a model is judged by: one table, read by the declaration's
validator, the Trainer (Keras), the Evaluator (TFMA) and the run's verdict.

Each label kind's first metric is its default `evaluation.metric`, and the
one the Trainer reports per epoch. Keras and TFMA share the class names.
"""

import dataclasses
import json
import math
from typing import Dict, Optional, Tuple


@dataclasses.dataclass(frozen=True)
class Metric:
  """One metric.

  Attributes:
    name: as the declaration, the Trainer's logs and the run's output say it.
    label_kind: `classes` or `regression`.
    class_name: the Keras and TFMA metric class.
    higher_is_better: for thresholds: a lower bound and a largest drop, or
      an upper bound and a largest rise.
    tfma_key: the name TFMA records its value under.
    in_training: whether the Trainer computes it per epoch too (AUC needs
      one score per example, which a sparse label does not give Keras).
    bounds: the values it can take.
  """
  name: str
  label_kind: str
  class_name: str
  higher_is_better: bool
  tfma_key: str
  in_training: bool = True
  bounds: Tuple[float, float] = (0.0, math.inf)

  def clipped(self, low: Optional[float], high: Optional[float]):
    """An interval of its value, within its bounds. TFMA's jackknife
    interval is symmetric about the estimate (estimate +- t * error), so
    a served model near 0 accuracy gets a low end below 0, which no model
    can score."""
    if low is None or high is None:
      return low, high
    floor, ceiling = self.bounds
    return min(max(low, floor), ceiling), min(max(high, floor), ceiling)


METRICS: Tuple[Metric, ...] = (
    Metric("accuracy", "classes", "SparseCategoricalAccuracy", True,
           "sparse_categorical_accuracy", bounds=(0.0, 1.0)),
    Metric("auc", "classes", "AUC", True, "auc", in_training=False, bounds=(0.0, 1.0)),
    Metric("rmse", "regression", "RootMeanSquaredError", False, "root_mean_squared_error"),
    Metric("mae", "regression", "MeanAbsoluteError", False, "mean_absolute_error"),
)


def for_label(kind: str) -> Dict[str, Metric]:
  """The metrics of a label kind, by name, its default first."""
  return {m.name: m for m in METRICS if m.label_kind == kind}


def named(name: str) -> Metric:
  return next(m for m in METRICS if m.name == name)


def of_class(class_name: str) -> Metric:
  return next(m for m in METRICS if m.class_name == class_name)


def blessing(eval_config_json: str) -> Metric:
  """The thresholded metric of an Evaluator's eval_config (its JSON, as ML
  Metadata and the compiled step record it)."""
  config = json.loads(eval_config_json)
  for spec in config.get("metrics_specs", []):
    for metric in spec.get("metrics", []):
      if metric.get("per_slice_thresholds") or metric.get("threshold"):
        return of_class(metric["class_name"])
  raise ValueError(f"no thresholded metric in the eval_config {config}")

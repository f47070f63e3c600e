"""The declaration's optional `tuning:` section: the hyperparameter search.

    tuning:
      algorithm: bayesian          # or random, hyperband
      max_trials: 10
      objective: accuracy          # default: evaluation.metric
      steps: 200                   # train steps per trial
      every: 4                     # search again every 4 spans (0: only when asked)
      space:
        learning_rate: {log_uniform: [1e-4, 1e-2]}
        batch_size: {choice: [32, 64, 128]}
        width: {int: [64, 256]}
        dropout: {uniform: [0.0, 0.5]}

Every bad entry gets its own line (an unknown field, an empty range, a metric
the label kind does not have), so one edit fixes them all. The search itself
is components/tuner/'s; this module only reads and checks.
"""

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Tuple

from dataset import metrics
from dataset.fields import MISSING, DeclarationError, FieldReader
from dataset.training import ConfigError, TrainingConfig, is_number

ALGORITHMS = ("bayesian", "random", "hyperband")
DISTRIBUTIONS = ("log_uniform", "uniform", "int", "choice")
# The TrainingConfig fields a search may set: the ones that change what is
# learnt, not how fast or where (steps, loop, precision, cache, GPUs). Every
# value a search may pick is checked by TrainingConfig itself.
TUNABLE = ("learning_rate", "batch_size", "width", "dropout", "fine_tune_learning_rate",
           "flip_left_right", "max_crop_fraction", "max_brightness_delta",
           "max_contrast_delta")
_KEYS = ("algorithm", "max_trials", "objective", "steps", "every", "space")


@dataclasses.dataclass(frozen=True)
class Dimension:
  """One searched field: `distribution` over `values` (the bounds, or the
  choices)."""
  field: str
  distribution: str
  values: Tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Tuning:
  """A declaration's search.

  Attributes:
    algorithm: one of ALGORITHMS (keras-tuner's oracles).
    max_trials: trials in one search.
    objective: the metric each trial is scored by, on the eval split.
    steps: train steps per trial (hyperband: for its longest trials).
    every: search again once the newest span is this many spans past the
      latest search's; 0 only when none exists or a run asks (`--tune`).
    space: the searched fields.
  """
  algorithm: str
  max_trials: int
  objective: str
  steps: int
  every: int
  space: Tuple[Dimension, ...]

  def to_dict(self) -> Dict[str, Any]:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, d: Optional[Mapping[str, Any]]) -> Optional["Tuning"]:
    if not d:
      return None
    space = tuple(Dimension(s["field"], s["distribution"], tuple(s["values"]))
                  for s in d["space"])
    return cls(**{**d, "space": space})


def _yaml_number(value):
  """YAML 1.1 (PyYAML) reads `1e-4` as a string: it wants `1.0e-4`."""
  if isinstance(value, str):
    try:
      return float(value)
    except ValueError:
      pass
  return value


def _dimension(field: str, node: Any, backbone: bool) -> Tuple[Optional[Dimension], str]:
  """The dimension, or None and what was wrong (expected, found)."""
  if field not in TUNABLE:
    return None, (f"a TrainingConfig field that can be tuned ({', '.join(TUNABLE)}); "
                  "an unknown field")
  if field == "fine_tune_learning_rate" and not backbone:
    return None, "no fine_tune_learning_rate without an image backbone; it is searched"
  if not isinstance(node, Mapping) or len(node) != 1 or next(iter(node)) not in DISTRIBUTIONS:
    return None, ("one distribution: {log_uniform: [low, high]}, {uniform: [low, high]}, "
                  f"{{int: [low, high]}} or {{choice: [a, b, ...]}}; {node!r}")
  (distribution, values), = node.items()
  if not isinstance(values, list):
    return None, f"a list after {distribution}; {values!r}"
  values = [_yaml_number(v) for v in values]
  if distribution == "choice":
    if not values or len(set(map(repr, values))) != len(values):
      return None, f"a list of distinct choices; {values!r}"
  elif len(values) != 2 or not all(map(is_number, values)) or not values[0] < values[1]:
    return None, f"[low, high] with low < high; {values!r} (an empty range)"
  elif distribution == "int" and not all(isinstance(v, int) for v in values):
    return None, f"two integers; {values!r}"
  elif distribution == "log_uniform" and values[0] <= 0:
    return None, f"a low bound above 0 for log_uniform; {values!r}"
  # Every value the search may pick must be one TrainingConfig accepts; a
  # fine-tuning rate of 0 means "the declaration's", nothing to search.
  for value in values:
    if field == "fine_tune_learning_rate" and value == 0:
      return None, f"values {field} accepts (a number in (0, 1)); {value!r}"
    try:
      TrainingConfig(**{field: value})
    except ConfigError as e:
      return None, f"values {field} accepts ({e.allowed}); {value!r}"
  return Dimension(field, distribution, tuple(values)), ""


def parse_tuning(r: FieldReader, node: Any, label, evaluation_metric: str,
                 backbone: bool) -> Optional[Tuning]:
  """Reads `tuning:`; None when the declaration has none.

  Raises:
    DeclarationError: one line per bad entry.
  """
  if node is None:
    return None
  errors: List[str] = []

  def get(key, kind, default, **kw):
    try:
      return r.get(node, "tuning", key, kind, default, **kw)
    except DeclarationError as e:
      errors.append(str(e))
      return None

  if not isinstance(node, Mapping):
    raise r.fail("tuning", "a mapping", node)
  errors += [str(r.unknown_key("tuning", k, _KEYS)) for k in sorted(set(node) - set(_KEYS))]
  algorithm = get("algorithm", str, "bayesian", choices=ALGORITHMS)
  max_trials = get("max_trials", int, 10, minimum=1)
  steps = get("steps", int, 200, minimum=1)
  every = get("every", int, 0, minimum=0)
  known = metrics.for_label(label.kind)
  objective = get("objective", str, evaluation_metric)
  if objective is not None and (objective not in known or (
      objective == "auc" and label.num_classes != 2)):
    usable = [m for m in known if m != "auc" or label.num_classes == 2]
    errors.append(str(r.fail("tuning.objective", f"a metric of a {label.kind} label "
                             f"({', '.join(usable)})", objective)))
  space_node = node.get("space", MISSING)
  dimensions = []
  if not isinstance(space_node, Mapping) or not space_node:
    errors.append(str(r.fail("tuning.space", "a mapping of at least one field to its "
                             "range", space_node)))
  else:
    for field, spec in space_node.items():
      dimension, problem = _dimension(str(field), spec, backbone)
      if dimension:
        dimensions.append(dimension)
      else:
        expected, found = problem.rsplit("; ", 1)
        errors.append(f"{r.path}: field 'tuning.space.{field}': expected {expected}, "
                      f"found {found}")
  if errors:
    raise DeclarationError("\n".join(errors))
  return Tuning(algorithm, max_trials, objective, steps, every, tuple(dimensions))

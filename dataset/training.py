"""How the Trainer trains: one typed, validated configuration.

The pipeline's configuration (`pipeline/config.py`) holds one of these and
hands it to the Trainer through `custom_config` as a plain dict (`to_dict`).
It lives with the declaration, below the Trainer, because the declaration's
`tuning:` space is checked against it (dataset/tuning.py): one set of rules
for a value, whether set by a flag or picked by a search.
"""

import dataclasses
import math
from typing import Any, Dict, Mapping

LOOPS = ("fit", "custom")
PRECISIONS = ("auto", "float32", "mixed_float16")


class ConfigError(ValueError):
  """A configuration value outside its allowed range; names the field.

  Attributes:
    field: the field's name.
    allowed: what the field accepts, in words.
  """

  def __init__(self, message: str, field: str = "", allowed: str = ""):
    super().__init__(message)
    self.field, self.allowed = field, allowed


def check(name: str, value, ok: bool, allowed: str) -> None:
  if not ok:
    raise ConfigError(f"config field '{name}': expected {allowed}, found {value!r}",
                      name, allowed)


def _integer(value) -> bool:
  return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
  """An int or a float, not a bool (which Python counts as an int)."""
  return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
  """How the Trainer trains.

  Attributes:
    train_steps: optimizer steps in all.
    eval_steps: batches of eval data used for the Trainer's own validation.
    epochs: the train steps are split into this many epochs (for logging and
      the per-epoch validation).
    batch_size: examples per step on each replica (GPU); the global batch is
      this times the number of replicas.
    learning_rate: Adam's learning rate.
    width: units of the dense layer that joins the feature towers.
    dropout: the dropout rate after that layer.
    fine_tune_learning_rate: the learning rate once a backbone is unfrozen;
      0 takes the declaration's (`backbone.fine_tune_learning_rate`).
    shuffle_buffer: examples held for shuffling the training data.
    loop: `fit` (Keras) or `custom` (a GradientTape loop under the same
      distribution strategy, for users who need their own step).
    precision: `auto` (mixed_float16 when every visible GPU supports it,
      float32 otherwise), `float32` or `mixed_float16`.
    cache_mb: parsed training data is cached in memory when it fits in this
      many MB; 0 never caches.
    deterministic: read training data in a reproducible order (slower);
      evaluation is always read in order.
    flip_left_right: augment images with random horizontal flips.
    max_crop_fraction: augment images by cropping up to this fraction of
      each side and resizing back; 0 turns it off.
    max_brightness_delta: augment images by adding a random brightness in
      [-delta, delta] (pixels scaled to [0, 1]); 0 turns it off.
    max_contrast_delta: augment images by scaling their contrast by a random
      factor in [1 - delta, 1 + delta]; 0 turns it off.
    checkpoint_every: a checkpoint (step, model, optimizer) every this many
      optimizer steps, which an interrupted Trainer resumes from; 0 saves at
      each epoch's end (trainer/checkpoints.py).
    gpus: the GPUs this Trainer was given; it stops, naming what could not be
      loaded, when TensorFlow sees fewer, instead of training on the CPU.
      `python -m commands.kubeflow compile --resource Trainer:gpus=N` sets it.
    progress_seconds: in a log (not a terminal, whose line updates in
      place), a progress line every this many seconds of training
      (runtime/progress/training.py).
  """
  train_steps: int = 800
  eval_steps: int = 20
  epochs: int = 8
  batch_size: int = 64
  learning_rate: float = 2e-3
  width: int = 128
  dropout: float = 0.2
  fine_tune_learning_rate: float = 0.0
  shuffle_buffer: int = 2048
  loop: str = "fit"
  precision: str = "auto"
  cache_mb: int = 1024
  deterministic: bool = False
  flip_left_right: bool = False
  max_crop_fraction: float = 0.0
  max_brightness_delta: float = 0.0
  max_contrast_delta: float = 0.0
  checkpoint_every: int = 0
  gpus: int = 0
  progress_seconds: float = 60.0

  def __post_init__(self):
    for name in ("train_steps", "eval_steps", "epochs", "batch_size",
                 "shuffle_buffer", "width"):
      value = getattr(self, name)
      check(name, value, _integer(value) and value >= 1, "an integer >= 1")
    check("epochs", self.epochs, self.epochs <= self.train_steps,
          f"at most train_steps ({self.train_steps})")
    check("learning_rate", self.learning_rate,
          is_number(self.learning_rate) and 0 < self.learning_rate < 1, "a number in (0, 1)")
    check("fine_tune_learning_rate", self.fine_tune_learning_rate,
          is_number(self.fine_tune_learning_rate) and 0 <= self.fine_tune_learning_rate < 1,
          "a number in [0, 1) (0: the declaration's)")
    check("loop", self.loop, self.loop in LOOPS, f"one of {LOOPS}")
    check("precision", self.precision, self.precision in PRECISIONS,
          f"one of {PRECISIONS}")
    check("gpus", self.gpus, _integer(self.gpus) and self.gpus >= 0, "an integer >= 0")
    check("checkpoint_every", self.checkpoint_every,
          _integer(self.checkpoint_every) and self.checkpoint_every >= 0,
          "an integer >= 0 (0: at each epoch's end)")
    check("cache_mb", self.cache_mb, _integer(self.cache_mb) and self.cache_mb >= 0,
          "an integer >= 0")
    for name in ("dropout", "max_crop_fraction", "max_brightness_delta",
                 "max_contrast_delta"):
      value = getattr(self, name)
      check(name, value, is_number(value) and 0 <= value < 1, "a number in [0, 1)")
    check("progress_seconds", self.progress_seconds,
          is_number(self.progress_seconds) and self.progress_seconds > 0, "a number > 0")
    for name in ("deterministic", "flip_left_right"):
      check(name, getattr(self, name), isinstance(getattr(self, name), bool), "true or false")

  def with_train_steps(self, train_steps: int) -> "TrainingConfig":
    """The same configuration for another number of steps (a run-time value
    on Kubeflow); fewer steps than epochs means one step per epoch."""
    return dataclasses.replace(self, train_steps=train_steps,
                               epochs=min(self.epochs, train_steps))

  def with_values(self, values: Mapping[str, Any]) -> "TrainingConfig":
    """This configuration with `values` (field -> value) applied over it:
    a search's best hyperparameters (components/tuner/). Integers stay integers."""
    fields = {f.name: f.type for f in dataclasses.fields(self)}
    unknown = sorted(set(values) - set(fields))
    check("hyperparameters", unknown, not unknown, "only TrainingConfig fields")
    # JSON and keras-tuner may hand back 64.0 for an integer field.
    typed = {name: fields[name](value) if fields[name] in (int, float, bool) else value
             for name, value in values.items()}
    return dataclasses.replace(self, **typed)

  @property
  def steps_per_epoch(self) -> int:
    return math.ceil(self.train_steps / self.epochs)

  @property
  def augments(self) -> bool:
    return bool(self.flip_left_right or self.max_crop_fraction
                or self.max_brightness_delta or self.max_contrast_delta)

  def to_dict(self) -> Dict[str, Any]:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "TrainingConfig":
    unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
    check("training", unknown, not unknown, "only TrainingConfig fields")
    return cls(**d)

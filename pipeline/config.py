"""The one typed configuration of a pipeline run, validated in one place.

Runners build a `PipelineConfig` (from command-line flags, with the defaults
below); `create_pipeline` takes nothing else. Components receive the parts
they need through `custom_config`, as plain dicts made by `to_dict`.
"""

import dataclasses
import math
from typing import Any, Dict, List, Mapping

from dataset.declaration import Declaration


class ConfigError(ValueError):
  """A configuration value outside its allowed range; names the field."""


def _check(name: str, value, ok: bool, allowed: str) -> None:
  if not ok:
    raise ConfigError(f"config field '{name}': expected {allowed}, found {value!r}")


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
  """How the Trainer trains.

  Attributes:
    train_steps: optimizer steps in all.
    eval_steps: batches of eval data used for the Trainer's own validation.
    epochs: the train steps are split into this many epochs (for logging and
      the per-epoch validation).
    batch_size: examples per step.
    learning_rate: Adam's learning rate.
    shuffle_buffer: examples held for shuffling the training data.
    flip_left_right: augment images with random horizontal flips.
    max_brightness_delta: augment images by adding a random brightness in
      [-delta, delta]; 0 turns it off.
  """
  train_steps: int = 800
  eval_steps: int = 20
  epochs: int = 8
  batch_size: int = 64
  learning_rate: float = 2e-3
  shuffle_buffer: int = 2048
  flip_left_right: bool = False
  max_brightness_delta: float = 0.0

  def __post_init__(self):
    for name in ("train_steps", "eval_steps", "epochs", "batch_size",
                 "shuffle_buffer"):
      value = getattr(self, name)
      _check(name, value, isinstance(value, int) and value >= 1,
             "an integer >= 1")
    _check("epochs", self.epochs, self.epochs <= self.train_steps,
           f"at most train_steps ({self.train_steps})")
    _check("learning_rate", self.learning_rate,
           0 < self.learning_rate < 1, "a number in (0, 1)")
    _check("max_brightness_delta", self.max_brightness_delta,
           0 <= self.max_brightness_delta < 1, "a number in [0, 1)")

  def with_train_steps(self, train_steps: int) -> "TrainingConfig":
    """The same configuration for another number of steps (a run-time value
    on Kubeflow); fewer steps than epochs means one step per epoch."""
    return dataclasses.replace(self, train_steps=train_steps,
                               epochs=min(self.epochs, train_steps))

  @property
  def steps_per_epoch(self) -> int:
    return math.ceil(self.train_steps / self.epochs)

  def to_dict(self) -> Dict[str, Any]:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "TrainingConfig":
    return cls(**d)


# Beam's DirectRunner in this process: the data components' default, locally
# and inside each Kubeflow container.
DEFAULT_BEAM_ARGS = ("--direct_running_mode=in_memory", "--direct_num_workers=1")


@dataclasses.dataclass(frozen=True)
class Resources:
  """What one component's container asks of the cluster (Kubeflow only).

  Attributes:
    cpu: CPU cores, requested and limited to; 0 leaves the cluster default.
    memory_gb: memory in GB, requested and limited to; 0 leaves the default.
    gpus: accelerators (GPUs) attached to the container.
    gpu_type: the accelerator's name: a Kubernetes resource name such as
      `nvidia.com/gpu` on open-source Kubeflow Pipelines, an accelerator type
      such as `NVIDIA_TESLA_T4` on Vertex AI Pipelines.
  """
  cpu: float = 0
  memory_gb: float = 0
  gpus: int = 0
  gpu_type: str = "nvidia.com/gpu"

  def __post_init__(self):
    _check("resources.cpu", self.cpu, self.cpu >= 0, "a number >= 0")
    _check("resources.memory_gb", self.memory_gb, self.memory_gb >= 0,
           "a number >= 0")
    _check("resources.gpus", self.gpus,
           isinstance(self.gpus, int) and self.gpus >= 0, "an integer >= 0")
    _check("resources.gpu_type", self.gpu_type, bool(self.gpu_type),
           "an accelerator name")


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
  """Everything `create_pipeline` needs.

  Attributes:
    pipeline_name: names the pipeline in ML Metadata and on Kubeflow.
    pipeline_root: where component outputs (artifacts) are written.
    serving_dir: where Pusher writes blessed models, one version per folder.
    declaration: the dataset, loaded and checked.
    training: how the Trainer trains.
    min_accuracy: the Evaluator blesses a model only at or above this eval
      accuracy.
    max_accuracy_drop: once a blessed model exists, a new one is blessed only
      if its accuracy is at most this much below the latest blessed model's.
    enable_cache: reuse a component's earlier outputs when its inputs and
      configuration are unchanged.
    beam_args: Apache Beam pipeline options for the data components.
    resources: component id -> its container's resources on Kubeflow.
    runtime_parameters: make the values that change from run to run (data
      root, train steps, push destination) runtime parameters, with this
      configuration's values as defaults; Kubeflow only, since
      LocalDagRunner needs every value when the pipeline is built.
  """
  pipeline_name: str
  pipeline_root: str
  serving_dir: str
  declaration: Declaration
  training: TrainingConfig = TrainingConfig()
  min_accuracy: float = 0.9
  max_accuracy_drop: float = 0.01
  enable_cache: bool = True
  beam_args: List[str] = dataclasses.field(
      default_factory=lambda: list(DEFAULT_BEAM_ARGS))
  resources: Mapping[str, Resources] = dataclasses.field(default_factory=dict)
  runtime_parameters: bool = False

  def __post_init__(self):
    _check("pipeline_name", self.pipeline_name,
           self.pipeline_name.replace("-", "").replace("_", "").isalnum(),
           "letters, digits, '-' and '_'")
    _check("min_accuracy", self.min_accuracy, 0 <= self.min_accuracy <= 1,
           "a number in [0, 1]")
    _check("max_accuracy_drop", self.max_accuracy_drop,
           0 <= self.max_accuracy_drop <= 1, "a number in [0, 1]")

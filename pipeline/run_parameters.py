"""A value the pipeline holds: a constant for a local run, or a Kubeflow
runtime parameter defaulting to it; the values a run may set, made once
(`RunParameters`)."""

import dataclasses
from typing import Any

from tfx.orchestration.data_types import RuntimeParameter

from pipeline.cache_keys import to_json
from pipeline.config import PipelineConfig


def runtime(config: PipelineConfig, name: str, value):
  """`value`, or a string runtime parameter `name` defaulting to it (Kubeflow)."""
  if not config.runtime_parameters:
    return value
  return RuntimeParameter(name=name, ptype=str, default=to_json(value))


@dataclasses.dataclass(frozen=True)
class RunParameters:
  """What each run may set, made once for the whole pipeline: constants for
  a local run; on Kubeflow, runtime parameters defaulting to them, which
  `python -m commands.kubeflow submit --param` and recurring runs set.

  Attributes:
    data_root: where the records are.
    serving_dir: the serving dir, in the one form every step takes it.
    train_steps: the Trainer's steps, as text (SpanWindow's parameter).
    tune: a request for a new search, Kubeflow only ("" locally, where the
      request is in the search's id: pipeline/inputs.py).
    scheduled_by: who or what started the run (the model card says).
  """
  data_root: Any
  serving_dir: Any
  train_steps: Any
  tune: Any
  scheduled_by: Any

  @classmethod
  def of(cls, config: PipelineConfig) -> "RunParameters":
    return cls(
        data_root=runtime(config, "data_root", config.declaration.data.root),
        serving_dir=runtime(config, "serving_dir", config.serving_dir),
        train_steps=runtime(config, "train_steps", str(config.training.train_steps)),
        tune=runtime(config, "tune", config.tune) if config.runtime_parameters else "",
        scheduled_by=runtime(config, "scheduled_by", config.scheduled_by))


@dataclasses.dataclass(frozen=True)
class WindowParameters:
  """What the run's window of data sets, by the parameter each step takes
  it as: for a local run the resolved values (constants); compiled for
  Kubeflow, runtime parameters defaulting to them, or the SpanWindow step's
  outputs when the first step resolves the window (kubeflow/steps/span_window.py).

  Attributes:
    input_config: ImportExampleGen's input splits (an Input proto).
    splits_config: the splits Transform analyses and transforms.
    train_args, eval_args: the Trainer's splits and steps.
    example_splits: the Evaluator's and ServingCheck's splits (JSON list).
    served_version: the baseline version ("none" when nothing is served).
    training_key: this run's training key (pipeline/cache_keys.py).
    drift_baseline: DriftGate's earlier span, with spans only (else None).
    tuning_search: the search the Tuner reuses, with tuning only (else None).
  """
  input_config: Any
  splits_config: Any
  train_args: Any
  eval_args: Any
  example_splits: Any
  served_version: Any
  training_key: Any
  drift_baseline: Any = None
  tuning_search: Any = None

  @classmethod
  def names(cls) -> tuple:
    return tuple(f.name for f in dataclasses.fields(cls))

  def items(self) -> list:
    """(name, value) for each value this run has, None ones left out."""
    return [(name, getattr(self, name)) for name in self.names()
            if getattr(self, name) is not None]

  def as_parameters(self, config: PipelineConfig) -> "WindowParameters":
    """Each value as `runtime` makes it: a constant locally, a runtime
    parameter of the same name on Kubeflow."""
    return WindowParameters(**{name: runtime(config, name, value) for name, value in self.items()})

"""A value the pipeline holds: a constant for a local run, or a Kubeflow
runtime parameter defaulting to it; the values a run may set, made once
(`RunValues`); and the push destination's one proto."""

import dataclasses
from typing import Any

from tfx.orchestration.data_types import RuntimeParameter
from tfx.proto import pusher_pb2

from pipeline.config import PipelineConfig
from pipeline.keys import to_json


def runtime(config: PipelineConfig, name: str, value):
  """`value`, or a string runtime parameter `name` defaulting to it (Kubeflow)."""
  if not config.runtime_parameters:
    return value
  return RuntimeParameter(name=name, ptype=str, default=to_json(value))


def push_destination(serving_dir: str) -> pusher_pb2.PushDestination:
  return pusher_pb2.PushDestination(filesystem=pusher_pb2.PushDestination.Filesystem(
      base_directory=serving_dir))


@dataclasses.dataclass(frozen=True)
class RunValues:
  """What each run may set, made once for the whole pipeline: constants for
  a local run; on Kubeflow, runtime parameters defaulting to them, which
  `python -m kubeflow submit --param` and recurring runs set.

  Attributes:
    data_root: where the records are.
    push_destination: the serving dir, as the Pusher's PushDestination.
    train_steps: the Trainer's steps, as text (SpanWindow's parameter).
    tune: a request for a new search, Kubeflow only ("" locally, where the
      request is in the search's id: pipeline/inputs.py).
  """
  data_root: Any
  push_destination: Any
  train_steps: Any
  tune: Any

  @classmethod
  def of(cls, config: PipelineConfig) -> "RunValues":
    return cls(
        data_root=runtime(config, "data_root", config.declaration.data.root),
        push_destination=runtime(config, "push_destination",
                                 push_destination(config.serving_dir)),
        train_steps=runtime(config, "train_steps", str(config.training.train_steps)),
        tune=runtime(config, "tune", config.tune) if config.runtime_parameters else "")

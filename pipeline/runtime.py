"""A value the pipeline holds: a constant for a local run, or a Kubeflow
runtime parameter defaulting to it; and the push destination's one proto."""

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

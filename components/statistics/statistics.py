"""StatisticsGen: TFX's, whose Beam pipeline skips Prism on this machine
(runtime/beam.py). Statistics, options and outputs are TFX's."""

from tfx.components.statistics_gen import component, executor
from tfx.dsl.components.base import executor_spec

from runtime.beam import NoPrism


class Executor(NoPrism, executor.Executor):
  """TFX's StatisticsGen executor."""


class StatisticsGen(component.StatisticsGen):
  """TFX's StatisticsGen, running the executor above."""
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

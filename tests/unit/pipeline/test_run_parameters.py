"""pipeline/run_parameters.py: a local run's values are constants; compiled
for Kubeflow, each is a runtime parameter of the same name whose default is
that constant, so `submit --param` and recurring runs can set it."""

import dataclasses

from tfx.orchestration.data_types import RuntimeParameter

from pipeline.config import PipelineConfig
from pipeline.run_parameters import RunParameters, WindowParameters


def _config(digits_decl, **changes) -> PipelineConfig:
  config = PipelineConfig(pipeline_name="digits", pipeline_root="/tmp/root",
                          serving_dir="/tmp/serving", declaration=digits_decl)
  return dataclasses.replace(config, **changes)


def test_a_local_run_holds_constants(digits_decl):
  run = RunParameters.of(_config(digits_decl, scheduled_by="cron"))
  assert run.serving_dir == "/tmp/serving" and run.scheduled_by == "cron"
  assert run.data_root == digits_decl.data.root
  assert run.tune == "" and run.train_steps == str(_config(digits_decl).training.train_steps)


def test_compiled_each_is_a_runtime_parameter_defaulting_to_it(digits_decl):
  run = RunParameters.of(_config(digits_decl, runtime_parameters=True))
  for field in dataclasses.fields(RunParameters):
    value = getattr(run, field.name)
    assert isinstance(value, RuntimeParameter) and value.name == field.name, field.name
  assert run.serving_dir.default == "/tmp/serving" and run.tune.default == ""


def test_a_window_leaves_out_what_it_has_not(digits_decl):
  window = WindowParameters(input_config="i", splits_config="s", train_args="t",
                            eval_args="e", example_splits="x", served_version="none",
                            training_key="k")
  assert [name for name, _ in window.items()] == [
      "input_config", "splits_config", "train_args", "eval_args", "example_splits",
      "served_version", "training_key"]
  compiled = window.as_parameters(_config(digits_decl, runtime_parameters=True))
  assert compiled.training_key.name == "training_key" and compiled.drift_baseline is None
  assert window.as_parameters(_config(digits_decl)) == window

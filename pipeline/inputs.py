"""A run's inputs: the span window, the served version and the training key.

They are what a run depends on outside the code, and they are resolved once,
when the run starts: by the local runner (`resolve_inputs`), or by the
first step of a compiled Kubeflow pipeline over spans
(pipeline/window_step.py). Building the pipeline reads nothing.
"""

import dataclasses
import json

from tfx import v1 as tfx

import serving
from dataset import spans
from dataset.declaration import Data
from pipeline.config import PipelineConfig
from pipeline.keys import trainer_config, training_key


@dataclasses.dataclass(frozen=True)
class RunInputs:
  """What a run depends on outside the code, resolved once when it starts.

  Attributes:
    window: the spans it reads (dataset/spans.py).
    training_key: what its model is trained from (see `training_key`).
    served_version: the served version it compares with and warm-starts
      from (components/baseline.py), or "" for the newest when the step
      runs (on Kubeflow: without spans, or until SpanWindow resolves it).
  """
  window: spans.Window
  training_key: str
  served_version: str
  protos: dict = dataclasses.field(default_factory=dict)


def resolve(data: Data, source: str, serving_dir: str, trainer_settings: dict,
            materialize: bool, train_steps: int, eval_steps: int) -> RunInputs:
  """Lists the data root's spans and the serving dir, now: the one place a
  run's inputs are resolved, for local runs (`resolve_inputs`) and for the
  SpanWindow step on Kubeflow (pipeline/window_step.py).

  Raises:
    DeclarationError: no span found; StorageError: a bucket unreachable.
  """
  window = spans.resolve(data, source)
  protos = window_protos(window, materialize, train_steps, eval_steps)
  key = training_key(data.root, window, trainer_settings, protos)
  return RunInputs(window, key, serving.baseline_version(serving_dir, key), protos)


def resolve_inputs(config: PipelineConfig) -> RunInputs:
  """`resolve` for a local run of `config`."""
  decl = config.declaration
  return resolve(decl.data, decl.path, config.serving_dir, trainer_config(config),
                 config.materialize, config.training.train_steps,
                 config.training.eval_steps)


def unresolved_inputs(config: PipelineConfig) -> RunInputs:
  """The inputs of a compiled Kubeflow pipeline, read from nothing: with
  spans, the pipeline's first step resolves them per run
  (pipeline/window_step.py); without, the newest served version is taken
  when BaselineModel runs."""
  return RunInputs(spans.unresolved(config.declaration.data), "", "")


def window_protos(window: spans.Window, materialize: bool, train_steps: int,
                  eval_steps: int) -> dict:
  """What the span window sets, by runtime parameter name: ImportExampleGen's
  input splits, the splits Transform analyses, the Trainer's and the
  Evaluator's splits. `python -m kubeflow submit` passes them afresh."""
  return {
      "input_config": tfx.proto.Input(splits=[
          tfx.proto.Input.Split(name=name, pattern=pattern)
          for name, pattern in window.inputs.items()]),
      "splits_config": tfx.proto.SplitsConfig(
          analyze=window.train_splits,
          transform=(window.train_splits + window.eval_splits
                     if materialize else [])),
      "train_args": tfx.proto.TrainArgs(splits=window.train_splits,
                                        num_steps=train_steps),
      "eval_args": tfx.proto.EvalArgs(splits=window.eval_splits,
                                      num_steps=eval_steps),
      "example_splits": json.dumps(list(window.eval_splits)),
  }

"""A run's inputs: the span window, the served version and the training key.

They are what a run depends on outside the code, and they are resolved once,
when the run starts: by the local runner (`resolve_inputs`), or by the
first step of a compiled Kubeflow pipeline over spans
(kubeflow/steps/span_window.py). Building the pipeline reads nothing.
"""

import dataclasses
import json
from typing import Optional, Tuple

from tfx.proto import example_gen_pb2, trainer_pb2, transform_pb2

import serving
from dataset import spans
from dataset.declaration import Data
from dataset.tuning import Tuning
from pipeline.cache_keys import trainer_config, training_key
from pipeline.config import PipelineConfig
from store.metadata import previous_statistics


@dataclasses.dataclass(frozen=True)
class RunInputs:
  """What a run depends on outside the code, resolved once when it starts.

  Attributes:
    window: the spans it reads (dataset/spans.py).
    training_key: what its model is trained from (see `training_key`).
    served_version: the served version it compares with and warm-starts
      from (components/baseline/baseline.py), or "" for the newest when the step
      runs (on Kubeflow: without spans, or until SpanWindow resolves it).
  """
  window: spans.Window
  training_key: str
  served_version: str
  protos: dict = dataclasses.field(default_factory=dict)  # `window_protos`, made once
  drift_baseline: str = "{}"  # what the drift check compares with (`drift_baseline`)
  # With tuning: the search it uses, run if it does not exist, and why
  # (components/tuner/record.py `plan`).
  tuning_search: str = ""
  tuning_why: str = ""
  # The Trainer's custom_config (pipeline/cache_keys.py), computed once: it hashes
  # the Trainer's code.
  trainer_config: dict = dataclasses.field(default_factory=dict)


def resolve(data: Data, source: str, serving_dir: str, trainer_settings: dict,
            materialize: bool, train_steps: int, eval_steps: int,
            tuning: Optional[Tuning] = None, tune: str = "") -> RunInputs:
  """Lists the data root's spans and the serving dir, now: the one place a
  run's inputs are resolved, for local runs (`resolve_inputs`) and for the
  SpanWindow step on Kubeflow (kubeflow/steps/span_window.py).

  Raises:
    DeclarationError: no span found; StorageError: a bucket unreachable.
  """
  window = spans.resolve(data, source)
  protos = window_protos(window, materialize, train_steps, eval_steps)
  search, why = tuning_choice(tuning, serving_dir, window, tune)
  # The search's settings are the Trainer's too: a model trained after a new
  # search meets the served one as its baseline.
  key = training_key(data.root, window,
                     {**trainer_settings, "tuning_search": search} if search
                     else trainer_settings, protos)
  return RunInputs(window, key, serving.baseline_version(serving_dir, key), protos,
                   drift_baseline(window, data), search, why, trainer_settings)


def tuning_choice(tuning: Optional[Tuning], serving_dir: str, window: spans.Window,
                  tune: str = "") -> Tuple[str, str]:
  """(the id of the search the run uses, why), or ("", "") without tuning;
  `tune` asks for a new one (components/tuner/record.py)."""
  if tuning is None:
    return "", ""
  from components.tuner import record
  search, _, why = record.choose(tuning, serving_dir,
                                 window.spans[-1][0] if window.spans else None, tune)
  return search, why


def drift_baseline(window: spans.Window, data: Data, statistics: str = "") -> str:
  """JSON: the newest span's training split, and the span before it: its
  training split if the window holds it, else its files' glob below the
  root and, when a local run found them in ML Metadata, its statistics.
  `{}` when there is no earlier span. components/drift_gate/drift_gate.py reads it."""
  if not window.previous:
    return "{}"
  span, version = window.previous
  split = f"train{spans.split_suffix(span, version)}"
  buckets = dict(data.hash_buckets)
  return json.dumps({
      "newest": window.train_splits[-1], "previous_span": span,
      "previous_split": split if split in window.train_splits else "",
      "previous_glob": window.previous_glob, "previous_statistics": statistics,
      # Data split by hash compares its training part with all of the
      # earlier span's files: the example count is scaled by this.
      "train_fraction": 1.0 if data.splits else buckets["train"] / sum(buckets.values())},
      sort_keys=True)


def resolve_inputs(config: PipelineConfig, metadata_path: str = "") -> RunInputs:
  """`resolve` for a local run of `config`; with its ML Metadata store, the
  earlier span's statistics are looked up there when the window lacks it."""
  decl = config.declaration
  inputs = resolve(decl.data, decl.path, config.serving_dir, trainer_config(config),
                   config.materialize, config.training.train_steps,
                   config.training.eval_steps, decl.tuning, config.tune)
  baseline = json.loads(inputs.drift_baseline)
  if metadata_path and baseline and not baseline["previous_split"]:
    span, version = inputs.window.previous
    found = previous_statistics.find(metadata_path,
                                     f"train{spans.split_suffix(span, version)}")
    if found:
      inputs = dataclasses.replace(
          inputs, drift_baseline=drift_baseline(inputs.window, decl.data, found))
  return inputs


def unresolved_inputs(config: PipelineConfig) -> RunInputs:
  """The inputs of a compiled Kubeflow pipeline, read from nothing: with
  spans, the pipeline's first step resolves them per run
  (kubeflow/steps/span_window.py); without, the newest served version is taken
  when BaselineModel runs."""
  window, training = spans.unresolved(config.declaration.data), config.training
  return RunInputs(window, "", "", window_protos(window, config.materialize,
                                                training.train_steps, training.eval_steps),
                   trainer_config=trainer_config(config))


def window_protos(window: spans.Window, materialize: bool, train_steps: int,
                  eval_steps: int) -> dict:
  """What the span window sets, by runtime parameter name: ImportExampleGen's
  input splits, the splits Transform analyses, the Trainer's and the
  Evaluator's splits. `python -m commands.kubeflow submit` passes them afresh."""
  return {
      "input_config": example_gen_pb2.Input(splits=[
          example_gen_pb2.Input.Split(name=name, pattern=pattern)
          for name, pattern in window.inputs.items()]),
      "splits_config": transform_pb2.SplitsConfig(
          analyze=window.train_splits,
          transform=(window.train_splits + window.eval_splits
                     if materialize else [])),
      "train_args": trainer_pb2.TrainArgs(splits=window.train_splits,
                                        num_steps=train_steps),
      "eval_args": trainer_pb2.EvalArgs(splits=window.eval_splits,
                                      num_steps=eval_steps),
      "example_splits": json.dumps(list(window.eval_splits)),
  }

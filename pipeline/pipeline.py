"""The pipeline, defined once: every runner calls `create_pipeline`.

ImportExampleGen -> StatisticsGen -> SchemaGen (or CuratedSchema) ->
ExampleValidator -> AnomaliesGate -> Transform -> Trainer -> Evaluator -> Pusher,
with BaselineModel (the model in production) feeding the Evaluator.

Every step is an ordinary component, so the same DAG compiles for Kubeflow
Pipelines v2 and runs on its open-source backend (which runs no importer-free
resolver steps) as well as on LocalDagRunner.
"""

import dataclasses
import hashlib
import json
import os
from typing import List, Optional

from google.protobuf import json_format
from tfx import v1 as tfx
from tfx.orchestration import metadata

import dataset
import trainer
from components import preprocessing
from components import transform as transform_component
from components.anomalies_gate import AnomaliesGate
from components.baseline import UNRESOLVED, BaselineModel, baseline_version
from components.curated_schema import curated_schema
from components.evaluator import Evaluator
from components.pusher import Pusher
from components.transform import CACHE_CONFIG_KEY, Transform
from dataset import spans
from dataset.declaration import Data
from pipeline.config import ConfigError, PipelineConfig
from pipeline.evaluation import eval_config

PREPROCESSING_FN = "components.preprocessing.preprocessing_fn"
RUN_FN = "trainer.run.run_fn"


def transform_code() -> List[str]:
  """The code that runs inside Transform: the preprocessing_fn, our Transform
  component, and the declaration it reads."""
  return [preprocessing.__file__, transform_component.__file__,
          os.path.dirname(dataset.__file__)]


def trainer_code() -> List[str]:
  """The code that runs inside the Trainer: `trainer/` and the declaration."""
  return [os.path.dirname(trainer.__file__), os.path.dirname(dataset.__file__)]


def code_fingerprint(paths: List[str]) -> str:
  """A hash of the code in `paths` (files, or folders of .py files).

  Transform and the Trainer name their functions by import path, so TFX's
  cache key would not change when that code does. Each one's hash goes into
  its own custom_config, so editing its code re-runs it (and what follows)
  instead of serving stale outputs from the cache, and editing the other's
  code does not.
  """
  digest = hashlib.sha256()
  for path in paths:
    files = ([os.path.join(path, n) for n in sorted(os.listdir(path)) if n.endswith(".py")]
             if os.path.isdir(path) else [path])
    for name in files:
      with open(name, "rb") as f:
        digest.update(os.path.basename(name).encode() + f.read())
  return digest.hexdigest()[:16]


def to_json(value):
  """A proto as a JSON string, which is how TFX passes protos to executors;
  strings and runtime parameters as they are."""
  if isinstance(value, (str, tfx.dsl.experimental.RuntimeParameter)):
    return value
  return json_format.MessageToJson(value, sort_keys=True, indent=None)


def _runtime(config: PipelineConfig, name: str, value):
  """`value`, or a string runtime parameter `name` defaulting to it (Kubeflow)."""
  if not config.runtime_parameters:
    return value
  return tfx.dsl.experimental.RuntimeParameter(name=name, ptype=str,
                                                default=to_json(value))


def training_key(data_root: str, window: spans.Window, custom_config: dict,
                 window_params: dict) -> str:
  """What a model is trained from, apart from its base model: the window's
  files, the Trainer's custom_config (settings and code) and the window's
  parameters, computed alike on both runners. Recorded beside the model, so
  that a rerun can tell its own earlier model from the baseline it met
  (components/baseline.py)."""
  settings = {**custom_config, **{k: to_json(v) for k, v in window_params.items()}}
  digest = hashlib.sha256(spans.fingerprint(data_root, window.inputs).encode())
  digest.update(json.dumps(settings, sort_keys=True).encode())
  return digest.hexdigest()[:16]


def analyzer_cache_dir(config: PipelineConfig) -> str:
  """Transform's analyzer cache, shared by the pipeline's runs
  (components/transform.py)."""
  return f"{config.pipeline_root.rstrip('/')}/analyzer_cache/{config.pipeline_name}"


def push_destination(serving_dir: str) -> tfx.proto.PushDestination:
  return tfx.proto.PushDestination(filesystem=tfx.proto.PushDestination.Filesystem(
      base_directory=serving_dir))


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


def _output_config(config: PipelineConfig):
  """ImportExampleGen's output: hash-split unless the data is pre-split.
  Explicit even when empty (keep the input splits): TFX would derive it from
  the input config, which on Kubeflow is a runtime parameter."""
  data = config.declaration.data
  if data.splits:
    return tfx.proto.Output()
  return tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
      tfx.proto.SplitConfig.Split(name=name, hash_buckets=buckets)
      for name, buckets in data.hash_buckets.items()]))


def transform_config(config: PipelineConfig) -> dict:
  """Transform's custom_config: what changes its output, and nothing else
  (a training setting must not re-run a 60-second Transform)."""
  return {"declaration": config.declaration.contract(),
          "code": code_fingerprint(transform_code()),
          CACHE_CONFIG_KEY: analyzer_cache_dir(config)}


def trainer_config(config: PipelineConfig) -> dict:
  """The Trainer's custom_config: the declaration, the training settings,
  whether Transform materialized, and the Trainer's code."""
  return {"declaration": config.declaration.contract(),
          "training": config.training.to_dict(),
          "materialized": config.materialize,
          "code": code_fingerprint(trainer_code())}


@dataclasses.dataclass(frozen=True)
class RunInputs:
  """What a run depends on outside the code, resolved once when it starts.

  Attributes:
    window: the spans it reads (dataset/spans.py).
    training_key: what its model is trained from (see `training_key`).
    served_version: the served version it compares with and warm-starts
      from (components/baseline.py), "" for the newest when the step runs,
      or UNRESOLVED on Kubeflow with spans until `submit` resolves it.
  """
  window: spans.Window
  training_key: str
  served_version: str
  protos: dict = dataclasses.field(default_factory=dict)


def resolve(data: Data, source: str, serving_dir: str, trainer_settings: dict,
            materialize: bool, train_steps: int, eval_steps: int) -> RunInputs:
  """Lists the data root's spans and the serving dir, now: the one place a
  run's inputs are resolved, for local runs (`resolve_inputs`) and for
  `python -m kubeflow submit` (kubeflow/window.py).

  Raises:
    DeclarationError: no span found; StorageError: a bucket unreachable.
  """
  window = spans.resolve(data, source)
  protos = window_protos(window, materialize, train_steps, eval_steps)
  key = training_key(data.root, window, trainer_settings, protos)
  return RunInputs(window, key, baseline_version(serving_dir, key), protos)


def resolve_inputs(config: PipelineConfig) -> RunInputs:
  """`resolve` for a local run of `config`."""
  decl = config.declaration
  return resolve(decl.data, decl.path, config.serving_dir, trainer_config(config),
                 config.materialize, config.training.train_steps,
                 config.training.eval_steps)


def unresolved_inputs(config: PipelineConfig) -> RunInputs:
  """The inputs of a compiled Kubeflow pipeline, read from nothing: runtime
  parameters that `python -m kubeflow submit` resolves per run
  (kubeflow/window.py); without spans, the newest served version is taken
  when BaselineModel runs."""
  window = spans.unresolved(config.declaration.data)
  return RunInputs(window, "", UNRESOLVED if window.unresolved else "")


def create_components(config: PipelineConfig, inputs: RunInputs) -> List:
  """The pipeline's components, in order."""
  decl = config.declaration
  destination = _runtime(config, "push_destination",
                         push_destination(config.serving_dir))
  window = inputs.window
  protos = window_protos(window, config.materialize, config.training.train_steps,
                         config.training.eval_steps)
  by_window = {name: _runtime(config, name, value) for name, value in protos.items()}

  # Reads the TFRecords as they are: plain or GZIP, pre-split or hash-split,
  # each span of the window into splits of its own.
  example_gen = tfx.components.ImportExampleGen(
      input_base=_runtime(config, "data_root", decl.data.root),
      input_config=by_window["input_config"], output_config=_output_config(config))
  if decl.schema:
    # A curated schema from schemas/ is the contract; statistics use it too.
    schema_gen = curated_schema(decl.schema)
    statistics_gen = tfx.components.StatisticsGen(
        examples=example_gen.outputs["examples"],
        schema=schema_gen.outputs["schema"])
  else:
    # Without one, infer it from the training split's statistics.
    statistics_gen = tfx.components.StatisticsGen(
        examples=example_gen.outputs["examples"])
    schema_gen = tfx.components.SchemaGen(
        statistics=statistics_gen.outputs["statistics"], infer_feature_shape=True)
  # Compares every split's statistics with the schema.
  example_validator = tfx.components.ExampleValidator(
      statistics=statistics_gen.outputs["statistics"],
      schema=schema_gen.outputs["schema"])
  # Stops the run on anomalies: Transform waits for it.
  gate = AnomaliesGate(anomalies=example_validator.outputs["anomalies"])
  # Builds the preprocessing graph from the declaration, and applies it
  # unless the Trainer's input pipeline is to (materialize=False). Its
  # analyzer cache skips spans analysed by earlier runs. No statistics:
  # StatisticsGen has them, and computing them would read every span again.
  transform = Transform(
      examples=example_gen.outputs["examples"],
      schema=schema_gen.outputs["schema"], materialize=config.materialize,
      preprocessing_fn=PREPROCESSING_FN, splits_config=by_window["splits_config"],
      disable_statistics=True, custom_config=transform_config(config))
  transform.add_upstream_node(gate)
  # The model in production (the newest pushed, unless this very run pushed
  # it), if any: the baseline to beat, and the weights to warm-start from.
  # The version and this run's training key were chosen when the run started
  # (`RunInputs`); on Kubeflow by `python -m kubeflow submit`, when it lists
  # the spans (kubeflow/window.py), and without spans when the step runs.
  key, served = inputs.training_key, inputs.served_version
  baseline = BaselineModel(push_destination=to_json(destination),
                           served_version=_runtime(config, "served_version", served),
                           training_key=_runtime(config, "training_key", key))
  # Trains the Keras model on the transformed examples, or on the examples
  # with the transform graph applied as they are read.
  trainer_node = tfx.components.Trainer(
      run_fn=RUN_FN,
      examples=(transform.outputs["transformed_examples"] if config.materialize
                else example_gen.outputs["examples"]),
      transform_graph=transform.outputs["transform_graph"],
      schema=schema_gen.outputs["schema"],
      base_model=baseline.outputs["model"],
      train_args=by_window["train_args"], eval_args=by_window["eval_args"],
      custom_config=trainer_config(config))
  # Blesses the model only if it clears the thresholds, on this window's
  # eval splits, and does no worse than the baseline there.
  evaluator = Evaluator(
      examples=example_gen.outputs["examples"],
      model=trainer_node.outputs["model"],
      baseline_model=baseline.outputs["model"],
      eval_config=eval_config(config))
  # Set after construction: TFX's constructor JSON-encodes a list, and on
  # Kubeflow this is a runtime parameter holding that JSON already.
  evaluator.exec_properties["example_splits"] = by_window["example_splits"]
  # Copies a blessed model into a new version folder of the serving dir,
  # unless that dir already holds this very model.
  pusher = Pusher(
      model=trainer_node.outputs["model"],
      model_blessing=evaluator.outputs["blessing"],
      push_destination=destination)
  nodes = [example_gen, statistics_gen, schema_gen, example_validator, gate,
           transform, baseline, trainer_node, evaluator, pusher]
  _check_resources(config, [n.id for n in nodes])
  return nodes


def _check_resources(config: PipelineConfig, ids: List[str]) -> None:
  for node in config.resources:
    if node not in ids:
      raise ConfigError(f"config field 'resources': expected a component id "
                        f"({', '.join(ids)}), found {node!r}")


def create_pipeline(config: PipelineConfig,
                    metadata_connection_config: Optional[
                        metadata.ConnectionConfigType] = None,
                    inputs: Optional[RunInputs] = None) -> tfx.dsl.Pipeline:
  """The pipeline for `config`, for any runner.

  Args:
    config: the validated run configuration.
    metadata_connection_config: ML Metadata connection; None lets the runner
      choose (Kubeflow provides its own).
    inputs: what the run reads, from `resolve_inputs`; by default resolved
      now for a local run, and left to run time (`unresolved_inputs`) with
      runtime parameters, so that compiling opens no file.

  Returns:
    The TFX pipeline.
  """
  return tfx.dsl.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=create_components(config, inputs or (
          unresolved_inputs(config) if config.runtime_parameters
          else resolve_inputs(config))),
      enable_cache=config.enable_cache,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=list(config.beam_args))

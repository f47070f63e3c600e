"""The pipeline, defined once: every runner calls `create_pipeline`.

ImportExampleGen -> StatisticsGen -> SchemaGen (or ImportSchemaGen) ->
ExampleValidator -> AnomaliesGate -> Transform -> Trainer -> Evaluator -> Pusher
"""

import hashlib
import os
from typing import List, Optional

from tfx import v1 as tfx
from tfx.dsl.components.base import executor_spec
from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import (
  LatestBlessedModelStrategy,
)
from tfx.orchestration import metadata

import components
import dataset
from components.anomalies_gate import AnomaliesGate
from components.pusher import Executor as pusher_executor
from pipeline.config import PipelineConfig
from pipeline.evaluation import eval_config

PREPROCESSING_FN = "components.preprocessing.preprocessing_fn"
RUN_FN = "components.trainer.run_fn"


def code_fingerprint(folders=None) -> str:
  """A hash of the code that runs inside Transform and the Trainer.

  Transform and the Trainer name their functions by import path, so TFX's
  cache key would not change when that code does. This hash goes into their
  custom_config, so editing the code re-runs them instead of serving stale
  outputs from the cache.
  """
  digest = hashlib.sha256()
  folders = folders or [os.path.dirname(p.__file__) for p in (components, dataset)]
  for folder in folders:
    for name in sorted(os.listdir(folder)):
      if name.endswith(".py"):
        with open(os.path.join(folder, name), "rb") as f:
          digest.update(name.encode() + f.read())
  return digest.hexdigest()[:16]


def _input_config(config: PipelineConfig):
  """ImportExampleGen's input and output split configuration."""
  data = config.declaration.data
  if data.splits:
    return dict(input_config=tfx.proto.Input(splits=[
        tfx.proto.Input.Split(name=name, pattern=pattern)
        for name, pattern in data.splits.items()]))
  return dict(
      input_config=tfx.proto.Input(splits=[
          tfx.proto.Input.Split(name="all", pattern=data.pattern)]),
      output_config=tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
          tfx.proto.SplitConfig.Split(name=name, hash_buckets=buckets)
          for name, buckets in data.hash_buckets.items()])))


def create_components(config: PipelineConfig) -> List:
  """The pipeline's components, in order."""
  decl = config.declaration
  custom_config = {"declaration": decl.to_dict(),
                   "training": config.training.to_dict(),
                   "code": code_fingerprint()}

  # Reads the TFRecords as they are: plain or GZIP, pre-split or hash-split.
  example_gen = tfx.components.ImportExampleGen(
      input_base=decl.data.root, **_input_config(config))
  if decl.schema:
    # A curated schema from schemas/ is the contract; statistics use it too.
    schema_gen = tfx.components.ImportSchemaGen(schema_file=decl.schema)
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
  # Builds the preprocessing graph from the declaration and applies it.
  transform = tfx.components.Transform(
      examples=example_gen.outputs["examples"],
      schema=schema_gen.outputs["schema"],
      preprocessing_fn=PREPROCESSING_FN, custom_config=custom_config)
  transform.add_upstream_node(gate)
  # Trains the Keras model on the transformed examples.
  trainer = tfx.components.Trainer(
      run_fn=RUN_FN,
      examples=transform.outputs["transformed_examples"],
      transform_graph=transform.outputs["transform_graph"],
      schema=schema_gen.outputs["schema"],
      train_args=tfx.proto.TrainArgs(num_steps=config.training.train_steps),
      eval_args=tfx.proto.EvalArgs(num_steps=config.training.eval_steps),
      custom_config=custom_config)
  # The latest blessed model, if any: the baseline for the change threshold.
  baseline = tfx.dsl.Resolver(
      strategy_class=LatestBlessedModelStrategy,
      model=tfx.dsl.Channel(type=tfx.types.standard_artifacts.Model),
      model_blessing=tfx.dsl.Channel(
          type=tfx.types.standard_artifacts.ModelBlessing),
  ).with_id("latest_blessed_model_resolver")
  # Blesses the model only if it clears the thresholds.
  evaluator = tfx.components.Evaluator(
      examples=example_gen.outputs["examples"],
      model=trainer.outputs["model"],
      baseline_model=baseline.outputs["model"],
      eval_config=eval_config(config))
  # Copies a blessed model into a new version folder of the serving dir,
  # unless that dir already holds this very model.
  pusher = tfx.components.Pusher(
      custom_executor_spec=executor_spec.ExecutorClassSpec(pusher_executor),
      model=trainer.outputs["model"],
      model_blessing=evaluator.outputs["blessing"],
      push_destination=tfx.proto.PushDestination(
          filesystem=tfx.proto.PushDestination.Filesystem(
              base_directory=config.serving_dir)))
  return [example_gen, statistics_gen, schema_gen, example_validator, gate,
          transform, trainer, baseline, evaluator, pusher]


def create_pipeline(config: PipelineConfig,
                    metadata_connection_config: Optional[
                        metadata.ConnectionConfigType] = None
                    ) -> tfx.dsl.Pipeline:
  """The pipeline for `config`, for any runner.

  Args:
    config: the validated run configuration.
    metadata_connection_config: ML Metadata connection; None lets the runner
      choose (Kubeflow provides its own).

  Returns:
    The TFX pipeline.
  """
  return tfx.dsl.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=create_components(config),
      enable_cache=config.enable_cache,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=list(config.beam_args))

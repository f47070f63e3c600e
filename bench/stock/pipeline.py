"""The stock pipeline: TFX's own components with their default settings,
as TFX's penguin example builds it (`penguin_pipeline_local.py`), on the
data the project's pipeline reads (its `*.gz` files), split 4:1 by hash as the project splits
it. Transform materializes (its default); the Trainer reads the transformed
examples through `tf_dataset_factory`. The only setting not TFX's default
is the Evaluator's accuracy threshold of 0, without which TFMA blesses
nothing and the Pusher would not run (TFX issue #5148)."""

import os

import tensorflow_model_analysis as tfma
from tfx import v1 as tfx

MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module.py")


def create_pipeline(data_root: str, output_dir: str, train_steps: int,
                    eval_steps: int) -> tfx.dsl.Pipeline:
  example_gen = tfx.components.ImportExampleGen(
      input_base=data_root,
      input_config=tfx.proto.Input(splits=[
          tfx.proto.Input.Split(name="single_split", pattern="*.gz")]),
      output_config=tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
          tfx.proto.SplitConfig.Split(name="train", hash_buckets=4),
          tfx.proto.SplitConfig.Split(name="eval", hash_buckets=1)])))
  statistics_gen = tfx.components.StatisticsGen(examples=example_gen.outputs["examples"])
  schema_gen = tfx.components.SchemaGen(statistics=statistics_gen.outputs["statistics"],
                                        infer_feature_shape=True)
  example_validator = tfx.components.ExampleValidator(
      statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"])
  transform = tfx.components.Transform(
      examples=example_gen.outputs["examples"], schema=schema_gen.outputs["schema"],
      module_file=MODULE)
  trainer = tfx.components.Trainer(
      module_file=MODULE, examples=transform.outputs["transformed_examples"],
      transform_graph=transform.outputs["transform_graph"],
      schema=schema_gen.outputs["schema"],
      train_args=tfx.proto.TrainArgs(num_steps=train_steps),
      eval_args=tfx.proto.EvalArgs(num_steps=eval_steps))
  eval_config = tfma.EvalConfig(
      model_specs=[tfma.ModelSpec(label_key="label")],
      slicing_specs=[tfma.SlicingSpec()],
      metrics_specs=[tfma.MetricsSpec(metrics=[tfma.MetricConfig(
          class_name="SparseCategoricalAccuracy",
          threshold=tfma.MetricThreshold(value_threshold=tfma.GenericValueThreshold(
              lower_bound={"value": 0.0})))])])
  evaluator = tfx.components.Evaluator(
      examples=example_gen.outputs["examples"], model=trainer.outputs["model"],
      eval_config=eval_config)
  pusher = tfx.components.Pusher(
      model=trainer.outputs["model"], model_blessing=evaluator.outputs["blessing"],
      push_destination=tfx.proto.PushDestination(
          filesystem=tfx.proto.PushDestination.Filesystem(
              base_directory=os.path.join(output_dir, "serving"))))
  return tfx.dsl.Pipeline(
      pipeline_name="stock", pipeline_root=os.path.join(output_dir, "pipeline_root"),
      components=[example_gen, statistics_gen, schema_gen, example_validator, transform,
                  trainer, evaluator, pusher],
      enable_cache=False,
      metadata_connection_config=tfx.orchestration.metadata.sqlite_metadata_connection_config(
          os.path.join(output_dir, "metadata.sqlite")))

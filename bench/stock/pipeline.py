"""The stock pipelines: TFX's own components with their default settings,
on the data the project's pipeline reads.

  table   as TFX's penguin example builds it (`penguin_pipeline_local.py`):
          the `*.gz` files split 4:1 by hash as the project splits them,
          the Evaluator on the raw examples (module.py)
  photos  as TFX's cifar10 example builds it (tensorflow/tfx v1.15,
          `cifar10_pipeline_native_keras.py`): the converted train/ and
          eval/ folders as the two splits, the Evaluator on the transformed
          examples, since the model takes the pixels Transform decoded
          (photos_module.py)

Transform materializes (its default); the Trainer reads the transformed
examples through `tf_dataset_factory`. The only setting not TFX's default
is the Evaluator's accuracy threshold of 0, without which TFMA blesses
nothing and the Pusher would not run (TFX issue #5148)."""

import os

import tensorflow_model_analysis as tfma
from tfx import v1 as tfx

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("table", "photos")


def _example_gen(data_root: str, kind: str):
  if kind == "photos":  # the splits as converted, as cifar10's are given
    return tfx.components.ImportExampleGen(
        input_base=data_root, input_config=tfx.proto.Input(splits=[
            tfx.proto.Input.Split(name="train", pattern="train/*"),
            tfx.proto.Input.Split(name="eval", pattern="eval/*")]))
  return tfx.components.ImportExampleGen(
      input_base=data_root,
      input_config=tfx.proto.Input(splits=[
          tfx.proto.Input.Split(name="single_split", pattern="*.gz")]),
      output_config=tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
          tfx.proto.SplitConfig.Split(name="train", hash_buckets=4),
          tfx.proto.SplitConfig.Split(name="eval", hash_buckets=1)])))


def create_pipeline(data_root: str, output_dir: str, train_steps: int,
                    eval_steps: int, kind: str = "table") -> tfx.dsl.Pipeline:
  module = os.path.join(HERE, "photos_module.py" if kind == "photos" else "module.py")
  example_gen = _example_gen(data_root, kind)
  statistics_gen = tfx.components.StatisticsGen(examples=example_gen.outputs["examples"])
  schema_gen = tfx.components.SchemaGen(statistics=statistics_gen.outputs["statistics"],
                                        infer_feature_shape=True)
  example_validator = tfx.components.ExampleValidator(
      statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"])
  transform = tfx.components.Transform(
      examples=example_gen.outputs["examples"], schema=schema_gen.outputs["schema"],
      module_file=module)
  trainer = tfx.components.Trainer(
      module_file=module, examples=transform.outputs["transformed_examples"],
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
  evaluated = (transform.outputs["transformed_examples"] if kind == "photos"
               else example_gen.outputs["examples"])
  evaluator = tfx.components.Evaluator(
      examples=evaluated, model=trainer.outputs["model"], eval_config=eval_config,
      schema=transform.outputs["post_transform_schema"] if kind == "photos" else None)
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

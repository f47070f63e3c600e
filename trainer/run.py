"""The Trainer's `run_fn`: it only delegates.

strategy -> datasets -> model -> fit (or the custom loop) -> export. Each
step is its own module, tested on its own.
"""

import os
from typing import List, Optional

import tensorflow as tf
import tensorflow_transform as tft
from tfx.components.trainer.fn_args_utils import FnArgs

from dataset.declaration import Declaration
from trainer import curves, distribute, export, input_pipeline, loop, model
from trainer.config import TrainingConfig


def vocab_sizes(tft_output: tft.TFTransformOutput, decl: Declaration) -> dict:
  """Categorical feature name -> ids the model must embed, OOV included."""
  return {f.name: tft_output.vocabulary_size_by_name(f.name) + f.num_oov_buckets
          for f in decl.of_kind("categorical")}


def train(train_files: List[str], eval_files: List[str],
          tft_output: tft.TFTransformOutput, decl: Declaration,
          config: TrainingConfig, strategy: tf.distribute.Strategy,
          materialized: bool = True, log_dir: Optional[str] = None) -> tf.keras.Model:
  """Builds the input pipelines and the model, and trains it.

  Args:
    train_files, eval_files: globs of GZIP TFRecords: Transform's output, or
      the raw examples when Transform did not materialize.
    tft_output: the Transform graph.
    decl: the dataset declaration.
    config: how to train.
    strategy: from `distribute.make_strategy`.
    materialized: whether the files hold transformed examples; if not, the
      input pipeline applies the Transform graph.

  Returns:
    The trained model.
  """
  distribute.set_precision(config.precision)
  if materialized:
    spec, transform = tft_output.transformed_feature_spec(), None
  else:
    spec, transform = tft_output.raw_feature_spec(), tft_output.transform_features_layer()

  def dataset(files, training):
    def make(ctx):
      ds = input_pipeline.make_dataset(files, spec, decl, config, training,
                                       transform, ctx)
      # Training data repeats by itself; the eval data is validated on for
      # eval_steps every epoch, so it repeats too.
      return ds if training else ds.repeat()
    return distribute.distribute(strategy, make)

  train_data = dataset(train_files, True)
  eval_data = dataset(eval_files, False)
  with strategy.scope():
    keras_model = model.build_model(decl, vocab_sizes(tft_output, decl), config)
  if not distribute.is_chief(strategy):
    log_dir = None
  if config.loop == "custom":
    loop.train_custom(keras_model, strategy, train_data, eval_data, config, log_dir,
                      regression=decl.label.kind == "regression")
  else:
    keras_model.fit(train_data, epochs=config.epochs,
                    steps_per_epoch=config.steps_per_epoch,
                    validation_data=eval_data, validation_steps=config.eval_steps,
                    callbacks=curves.callbacks(log_dir), verbose=0)
  return keras_model


def export_model(keras_model: tf.keras.Model, strategy: tf.distribute.Strategy,
                 tft_output: tft.TFTransformOutput, decl: Declaration,
                 serving_model_dir: str) -> None:
  """Exports the trained model; only the chief's copy is kept."""
  path = distribute.export_dir(strategy, serving_model_dir)
  export.export_serving_model(keras_model, tft_output, decl, path)
  distribute.discard_export(strategy, path)


def run_fn(fn_args: FnArgs) -> None:
  """TFX Trainer entry point.

  `fn_args.custom_config` holds `declaration` (a `Declaration.to_dict()`),
  `training` (a `TrainingConfig.to_dict()`) and `materialized` (whether
  Transform wrote transformed examples).
  """
  decl = Declaration.from_dict(fn_args.custom_config["declaration"])
  config = TrainingConfig.from_dict(fn_args.custom_config["training"])
  # train_args carries the steps: on Kubeflow a run-time parameter.
  config = config.with_train_steps(fn_args.train_steps or config.train_steps)
  tft_output = tft.TFTransformOutput(fn_args.transform_output)
  # Kubeflow's training operator and Vertex AI describe the cluster here.
  strategy = distribute.make_strategy(os.environ.get("TF_CONFIG"))
  keras_model = train(fn_args.train_files, fn_args.eval_files, tft_output, decl,
                      config, strategy,
                      fn_args.custom_config.get("materialized", True),
                      log_dir=fn_args.model_run_dir)
  export_model(keras_model, strategy, tft_output, decl, fn_args.serving_model_dir)

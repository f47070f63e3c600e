"""The Trainer's `run_fn`: it only delegates.

build datasets -> build model -> fit -> export. Each step is its own module,
tested on its own.
"""

import tensorflow_transform as tft
from tfx.components.trainer.fn_args_utils import FnArgs

from components import export, input_fn, model
from dataset.declaration import Declaration
from pipeline.config import TrainingConfig


def vocab_sizes(tft_output: tft.TFTransformOutput, decl: Declaration) -> dict:
  """Categorical feature name -> ids the model must embed, OOV included."""
  return {f.name: tft_output.vocabulary_size_by_name(f.name) + f.num_oov_buckets
          for f in decl.of_kind("categorical")}


def run_fn(fn_args: FnArgs) -> None:
  """TFX Trainer entry point.

  `fn_args.custom_config` holds `declaration` (a `Declaration.to_dict()`) and
  `training` (a `TrainingConfig.to_dict()`).
  """
  decl = Declaration.from_dict(fn_args.custom_config["declaration"])
  config = TrainingConfig.from_dict(fn_args.custom_config["training"])
  # train_args carries the steps: on Kubeflow a run-time parameter.
  config = config.with_train_steps(fn_args.train_steps or config.train_steps)
  tft_output = tft.TFTransformOutput(fn_args.transform_output)
  spec = tft_output.transformed_feature_spec()
  train = input_fn.make_dataset(fn_args.train_files, spec, decl, config, True)
  evaluation = input_fn.make_dataset(fn_args.eval_files, spec, decl, config, False)
  keras_model = model.build_model(decl, vocab_sizes(tft_output, decl), config)
  keras_model.fit(train, epochs=config.epochs,
                  steps_per_epoch=config.steps_per_epoch,
                  validation_data=evaluation.repeat(),
                  validation_steps=config.eval_steps, verbose=2)
  export.export_serving_model(keras_model, tft_output, decl,
                              fn_args.serving_model_dir)

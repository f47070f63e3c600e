"""The stock pipeline's module file, written as TFX's penguin example
(`tfx/examples/penguin/penguin_utils_keras.py`) writes one: z-scored numeric
features, the Trainer on `data_accessor.tf_dataset_factory` over the
materialized transformed examples, and the serving signature that parses,
transforms and predicts.

Its model is the project's for a table (trainer/model.py): every feature
concatenated, Dense(32), Dense(128), Dropout(0.2), softmax; Adam at the
project's default learning rate and batch size. So the benchmark compares
the pipelines, not two models.
"""

import tensorflow as tf
import tensorflow_transform as tft
from tfx import v1 as tfx
from tfx_bsl.public import tfxio

LABEL = "label"
NUM_CLASSES = 10
BATCH_SIZE = 64
LEARNING_RATE = 2e-3


def preprocessing_fn(inputs):
  outputs = {name: tft.scale_to_z_score(tf.cast(value, tf.float32))
             for name, value in inputs.items() if name != LABEL}
  outputs[LABEL] = inputs[LABEL]
  return outputs


def _input_fn(files, data_accessor, transform_output, batch_size):
  return data_accessor.tf_dataset_factory(
      files, tfxio.TensorFlowDatasetOptions(batch_size=batch_size, label_key=LABEL),
      transform_output.transformed_metadata.schema).repeat()


def head(inputs, x, num_classes: int):
  """The project's head on its feature towers (trainer/model.py
  `build_model`): Dense(128), Dropout(0.2), softmax, compiled with Adam at
  the project's default learning rate. The photos module shares it."""
  keras = tf.keras
  x = keras.layers.Dense(128, activation="relu")(x)
  x = keras.layers.Dropout(0.2)(x)
  outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
  model = keras.Model(inputs=inputs, outputs=outputs)
  model.compile(optimizer=keras.optimizers.Adam(LEARNING_RATE),
                loss="sparse_categorical_crossentropy",
                metrics=[keras.metrics.SparseCategoricalAccuracy()])
  return model


def _model(feature_names):
  keras = tf.keras
  inputs = [keras.layers.Input(shape=(1,), name=name) for name in feature_names]
  x = keras.layers.concatenate(inputs)
  return head(inputs, keras.layers.Dense(32, activation="relu")(x), NUM_CLASSES)


def _serving_signature(model, transform_output):
  model.tft_layer = transform_output.transform_features_layer()

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
  def serve(serialized):
    spec = transform_output.raw_feature_spec()
    spec.pop(LABEL)
    features = model.tft_layer(tf.io.parse_example(serialized, spec))
    return {"outputs": model(features)}

  return {"serving_default": serve}


def run_fn(fn_args: tfx.components.FnArgs):
  transform_output = tft.TFTransformOutput(fn_args.transform_output)
  names = sorted(n for n in transform_output.transformed_feature_spec() if n != LABEL)
  train = _input_fn(fn_args.train_files, fn_args.data_accessor, transform_output, BATCH_SIZE)
  evaluate = _input_fn(fn_args.eval_files, fn_args.data_accessor, transform_output,
                       BATCH_SIZE)
  model = _model(names)
  epochs = min(8, fn_args.train_steps)  # as the project's TrainingConfig
  model.fit(train, steps_per_epoch=fn_args.train_steps // epochs, epochs=epochs,
            validation_data=evaluate, validation_steps=fn_args.eval_steps)
  tf.saved_model.save(model, fn_args.serving_model_dir,
                      signatures=_serving_signature(model, transform_output))

"""The stock photos pipeline's module file, written as TFX's cifar10 example
(`tfx/examples/cifar10/cifar10_utils_native_keras.py`, tensorflow/tfx
v1.15; removed in 1.16) writes one: Transform decodes each image with
`tf.map_fn` and resizes it to the model's input, so the transformed
examples hold float pixels; the Trainer reads them through
`data_accessor.tf_dataset_factory` and flips training images at random in
its input_fn; the model serves float pixels, and the Evaluator reads the
transformed examples. What the example adds for MLKit (TFLite rewriting and
metadata) is left out: it is not the pipeline's work.

Its model is the project's built-in CNN for one image feature, built by
the project's own code (trainer/model.py `image_tower`, then module.py's
`head`), not the example's MobileNet with ImageNet weights, so the
benchmark compares the pipelines, not two models: pixels scaled to [0, 1],
Conv2D and MaxPooling2D until the side is 8 or less, two more Conv2D,
Flatten, Dense(128), Dense(128), Dropout(0.2), softmax; Adam at the
project's default learning rate and batch size.
"""

import tensorflow as tf
from tfx import v1 as tfx
from tfx_bsl.public import tfxio

from bench.photos import CLASSES as NUM_CLASSES
from bench.photos import SIZE

IMAGE, LABEL = "image", "label"
BATCH_SIZE = 64


def preprocessing_fn(inputs):
  # tf.io.decode_jpeg takes one image, not a batch: hence tf.map_fn.
  images = tf.map_fn(lambda x: tf.io.decode_jpeg(x[0], channels=3), inputs[IMAGE],
                     fn_output_signature=tf.uint8)
  return {IMAGE: tf.image.resize(images, [SIZE, SIZE]), LABEL: inputs[LABEL]}


def _input_fn(files, data_accessor, transform_output, is_train):
  dataset = data_accessor.tf_dataset_factory(
      files, tfxio.TensorFlowDatasetOptions(batch_size=BATCH_SIZE, label_key=LABEL),
      transform_output.transformed_metadata.schema)
  if is_train:
    dataset = dataset.map(lambda x, y: (
        {IMAGE: tf.image.random_flip_left_right(x[IMAGE])}, y))
  return dataset.repeat()


def _model():
  from bench.stock.module import head
  from dataset.training import TrainingConfig
  from dataset.types import Feature, Image
  from trainer.model import image_tower
  inputs = tf.keras.Input((SIZE, SIZE, 3), name=IMAGE)
  feature = Feature(IMAGE, "image", dtype="bytes", image=Image("jpeg", SIZE, SIZE, 3))
  # No augmentation in the model: the input_fn flips, as cifar10's does.
  return head(inputs, image_tower(inputs, feature, TrainingConfig()), NUM_CLASSES)


def run_fn(fn_args: tfx.components.FnArgs):
  import tensorflow_transform as tft
  transform_output = tft.TFTransformOutput(fn_args.transform_output)
  train = _input_fn(fn_args.train_files, fn_args.data_accessor, transform_output, True)
  evaluate = _input_fn(fn_args.eval_files, fn_args.data_accessor, transform_output, False)
  model = _model()
  epochs = min(8, fn_args.train_steps)  # as the project's TrainingConfig
  model.fit(train, steps_per_epoch=fn_args.train_steps // epochs, epochs=epochs,
            validation_data=evaluate, validation_steps=fn_args.eval_steps)

  @tf.function(input_signature=[tf.TensorSpec([None, SIZE, SIZE, 3], tf.float32,
                                              name=IMAGE)])
  def serve(images):
    return {"outputs": model(images)}

  model.save(fn_args.serving_model_dir, save_format="tf",
             signatures={"serving_default": serve})

"""Image scaling and augmentation, as layers at the bottom of the model.

They run where the model runs, on the accelerator: the input pipeline hands
over pixels in their stored dtype (uint8 for PNG/JPEG), a quarter of the
bytes of float32. Every augmentation layer is active in training only, so
the serving signature, which calls the model with `training=False`, gets the
same scaling and none of the randomness.

In:  [batch, h, w, c] pixels of the stored dtype.
Out: float [batch, h, w, c]; integer pixels scaled to [0, 1], float pixels
     kept as stored.
"""

import tensorflow as tf

from dataset.declaration import Feature
from dataset.training import TrainingConfig
from trainer.image_decoding import pixel_dtype

keras = tf.keras


class RandomResizedCrop(keras.layers.Layer):
  """Crops up to `fraction` of each side, per image, and resizes back."""

  def __init__(self, fraction: float, **kwargs):
    super().__init__(**kwargs)
    self.fraction = fraction

  def call(self, images, training=None):
    if not training:
      return images
    batch = tf.shape(images)[0]
    # One box per image, [y1, x1, y2, x2] in [0, 1]; crop_and_resize is one
    # vectorized op, where a per-image random_crop would loop.
    starts = tf.random.uniform([batch, 2], 0, self.fraction)
    ends = 1 - tf.random.uniform([batch, 2], 0, self.fraction)
    boxes = tf.concat([starts, ends], axis=1)
    size = tf.shape(images)[1:3]
    out = tf.image.crop_and_resize(tf.cast(images, tf.float32), boxes,
                                   tf.range(batch), size)
    return tf.cast(out, images.dtype)

  def get_config(self):
    return {**super().get_config(), "fraction": self.fraction}


def _scale(f: Feature) -> float:
  dtype = pixel_dtype(f)
  return 1.0 / dtype.max if dtype.is_integer else 1.0


def scale_and_augment(x, f: Feature, config: TrainingConfig):
  """Applies the feature's scaling, then the configured augmentations.

  These layers compute in float32 under any precision policy: some image
  ops (AdjustContrastv2 on the CPU) have no float16 kernel, and the next
  layer casts to float16 anyway.
  """
  def name(suffix):
    return {"name": f"{f.name}_{suffix}", "dtype": "float32"}

  x = keras.layers.Rescaling(_scale(f), **name("scale"))(x)
  if config.flip_left_right:
    x = keras.layers.RandomFlip("horizontal", **name("flip"))(x)
  if config.max_crop_fraction:
    x = RandomResizedCrop(config.max_crop_fraction, **name("crop"))(x)
  if config.max_brightness_delta:
    x = keras.layers.RandomBrightness(config.max_brightness_delta,
                                      value_range=(0, 1), **name("brightness"))(x)
  if config.max_contrast_delta:
    x = keras.layers.RandomContrast(config.max_contrast_delta, **name("contrast"))(x)
  return x

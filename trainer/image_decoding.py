"""Image decoding, shared by the input pipeline and the serving signature.

Both paths call the same functions, so the pixels a model trains on and the
pixels it serves on cannot drift apart. Pixels keep their stored dtype (uint8
for PNG and JPEG): scaling to float happens in the model (`trainer.augment`),
on the accelerator, so the CPU decodes and the host copies a quarter of the
bytes float32 would need.
"""

import tensorflow as tf

from dataset.declaration import Feature


def pixel_dtype(f: Feature) -> tf.DType:
  """The dtype of decoded pixels: uint8 for PNG/JPEG, the raw dtype otherwise."""
  # The declaration's raw dtype names (dataset.records.image_bytes.RAW_DTYPES) are
  # TensorFlow's own.
  return tf.as_dtype(f.image.raw_dtype) if f.image.encoding == "raw" else tf.uint8


def _shape(f: Feature):
  return list(f.image.shape)


def decode_image(value: tf.Tensor, f: Feature) -> tf.Tensor:
  """Decodes one PNG or JPEG image.

  Args:
    value: a scalar string of PNG or JPEG bytes.
    f: the declared image feature (encoding png or jpeg).

  Returns:
    uint8 [height, width, channels]. An image of another size is resized to
    the declared one, keeping its aspect (padded).
  """
  # decode_image handles PNG and JPEG alike; expand_animations=False keeps a
  # GIF-like input from turning into a 4-D batch of frames.
  pixels = tf.io.decode_image(value, channels=f.image.channels, expand_animations=False)
  same_size = tf.reduce_all(tf.shape(pixels)[:2] == [f.image.height, f.image.width])
  pixels = tf.cond(
      same_size, lambda: pixels,
      lambda: tf.cast(tf.round(tf.image.resize_with_pad(
          tf.cast(pixels, tf.float32), f.image.height, f.image.width)), tf.uint8))
  return tf.ensure_shape(pixels, _shape(f))


def decode_raw(values: tf.Tensor, f: Feature) -> tf.Tensor:
  """Reinterprets a [batch] of raw pixel strings, vectorized.

  Args:
    values: [batch] strings, each height * width * channels pixels of the
      declared raw dtype.
    f: the declared image feature (encoding raw).

  Returns:
    [batch, height, width, channels] of the raw dtype.

  Raises:
    tf.errors.InvalidArgumentError: a string of another length.
  """
  pixels = tf.io.decode_raw(values, pixel_dtype(f))
  return tf.reshape(pixels, [-1] + _shape(f))


def decode_batch(values: tf.Tensor, f: Feature) -> tf.Tensor:
  """Decodes a [batch] string tensor into [batch, h, w, c] pixels.

  Both the serving signature and the input pipeline call this, the input
  pipeline on several batches in parallel.
  """
  if f.image.encoding == "raw":
    return decode_raw(values, f)
  return tf.map_fn(lambda v: decode_image(v, f), values,
                   fn_output_signature=tf.TensorSpec(_shape(f), tf.uint8))

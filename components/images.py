"""Image decoding, shared by the Trainer's input_fn and the serving signature.

Both paths call the same function, so the pixels a model is trained on and the
pixels it serves on cannot drift apart.
"""

import tensorflow as tf

from dataset.declaration import Feature

_RAW_DTYPES = {"uint8": tf.uint8, "uint16": tf.uint16, "float16": tf.float16,
               "float32": tf.float32, "float64": tf.float64}


def decode_image(value: tf.Tensor, f: Feature) -> tf.Tensor:
  """Decodes one image.

  Args:
    value: a scalar string: PNG or JPEG bytes, or raw pixel bytes.
    f: the declared image feature.

  Returns:
    float32 [height, width, channels]. Integer pixels are scaled to [0, 1];
    float pixels are kept as stored. Encoded images of another size are
    resized to the declared one.
  """
  shape = [f.height, f.width, f.channels]
  if f.encoding == "raw":
    pixels = tf.reshape(tf.io.decode_raw(value, _RAW_DTYPES[f.raw_dtype]), shape)
  else:
    # decode_image handles PNG and JPEG alike; expand_animations=False keeps a
    # GIF-like input from turning into a 4-D batch of frames.
    pixels = tf.io.decode_image(value, channels=f.channels,
                                expand_animations=False)
    pixels = tf.image.convert_image_dtype(pixels, tf.float32)
    # Same-size images pass through unchanged; others keep their aspect.
    return tf.ensure_shape(
        tf.image.resize_with_pad(pixels, f.height, f.width), shape)
  if pixels.dtype.is_integer:
    return tf.image.convert_image_dtype(pixels, tf.float32)
  return tf.cast(pixels, tf.float32)


def decode_images(values: tf.Tensor, f: Feature) -> tf.Tensor:
  """Decodes a [batch] string tensor into float32 [batch, h, w, c]."""
  return tf.map_fn(lambda v: decode_image(v, f), values,
                   fn_output_signature=tf.TensorSpec(
                       [f.height, f.width, f.channels], tf.float32))

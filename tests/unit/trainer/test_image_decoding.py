"""Image decoding (trainer.image_decoding), eagerly and inside tf.data, as both the
input pipeline and the serving signature run it."""

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from dataset import declaration
from dataset.declaration import Feature
from trainer import image_decoding as images


def _png_and_pixels():
  pixels = (np.arange(64, dtype=np.uint8).reshape(8, 8) * 4)
  buf = io.BytesIO()
  Image.fromarray(pixels, mode="L").save(buf, format="PNG")
  return buf.getvalue(), pixels


def _feature(encoding, **kw):
  size = dict(height=8, width=8, channels=1)
  size.update(kw)
  return Feature("image", "image", dtype="bytes", image=declaration.Image(encoding, **size))


def test_png_decodes_to_its_uint8_pixels_eagerly_and_inside_tf_data():
  png, pixels = _png_and_pixels()
  f = _feature("png")
  eager = images.decode_image(tf.constant(png), f)
  in_map = next(iter(tf.data.Dataset.from_tensors(png).map(
      lambda v: images.decode_image(v, f))))
  assert eager.dtype == tf.uint8 and in_map.dtype == tf.uint8
  np.testing.assert_array_equal(eager.numpy(), pixels[..., None])
  np.testing.assert_array_equal(in_map.numpy(), pixels[..., None])


def test_raw_bytes_decode_vectorized_keeping_their_dtype():
  _, pixels = _png_and_pixels()
  f = _feature("raw")
  batch = tf.constant([pixels.tobytes(), pixels[::-1].tobytes()])
  out = images.decode_raw(batch, f)
  assert out.dtype == tf.uint8 and out.shape == (2, 8, 8, 1)
  np.testing.assert_array_equal(out[1].numpy()[..., 0], pixels[::-1])


def test_raw_float32_images_keep_their_values():
  pixels = np.random.default_rng(0).normal(size=(64, 64, 1)).astype(np.float32)
  f = _feature("raw", height=64, width=64, raw_dtype="float32")
  out = images.decode_batch(tf.constant([pixels.tobytes()] * 2), f).numpy()
  assert out.shape == (2, 64, 64, 1) and out.dtype == np.float32
  np.testing.assert_array_equal(out[1], pixels)


def test_raw_bytes_of_the_wrong_length_are_an_error():
  f = _feature("raw")
  with pytest.raises(tf.errors.InvalidArgumentError):
    images.decode_raw(tf.constant([b"\0" * 64, b"\0" * 63]), f)


def test_jpeg_of_another_size_is_resized_to_the_declared_size():
  jpeg = tf.io.encode_jpeg(tf.fill([20, 10, 3], tf.constant(200, tf.uint8))).numpy()
  f = _feature("jpeg", channels=3)
  out = images.decode_image(tf.constant(jpeg), f).numpy()
  assert out.shape == (8, 8, 3) and out.dtype == np.uint8
  assert abs(int(out.max()) - 200) <= 3


def test_serving_batch_decode_matches_the_pipelines_per_image_decode():
  png, pixels = _png_and_pixels()
  f = _feature("png")
  batch = images.decode_batch(tf.constant([png, png]), f).numpy()
  np.testing.assert_array_equal(batch[0], images.decode_image(tf.constant(png), f))

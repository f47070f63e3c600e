"""components/evaluator/image_samples.py: which eval images the report shows, and
their thumbnails for each way an image is stored."""

import base64

import numpy as np
import pytest
import tensorflow as tf

from components.evaluator import image_samples
from dataset.types import Feature, Image


def _feature(encoding: str, height=8, width=8, channels=1, raw_dtype="uint8") -> Feature:
  return Feature("photo", "image", dtype="bytes",
                 image=Image(encoding, height, width, channels, raw_dtype=raw_dtype))


def _png_size(b64: str):
  decoded = tf.io.decode_png(base64.b64decode(b64))
  return tuple(decoded.shape)


def test_a_few_of_each_class_and_the_most_confident_wrong_answers_first():
  truth = np.array([0, 1, 1, 0, 2, 1, 0, -1])
  probabilities = np.array([
      [0.9, 0.1, 0.0],   # right
      [0.8, 0.2, 0.0],   # wrong, 0.8
      [0.05, 0.0, 0.95],  # wrong, 0.95
      [0.6, 0.4, 0.0],   # right
      [0.0, 0.3, 0.7],   # right
      [0.4, 0.6, 0.0],   # right
      [0.1, 0.2, 0.7],   # wrong, 0.7
      [0.99, 0.0, 0.01],  # a label not declared: never "wrong"
  ])
  found = image_samples.choose(truth, probabilities, lambda i: f"img{i}", ["a", "b", "c"])
  assert found["per_class"] == [{"class": "a", "images": ["img0", "img3", "img6"]},
                                {"class": "b", "images": ["img1", "img2", "img5"]},
                                {"class": "c", "images": ["img4"]}]
  assert [(w["image"], w["true"], w["predicted"], w["confidence"]) for w in found["wrong"]] == [
      ("img2", "b", "c", 0.95), ("img1", "b", "a", 0.8), ("img6", "a", "c", 0.7)]


@pytest.mark.parametrize("encoding", ["png", "jpeg"])
def test_encoded_images_become_png_thumbnails_scaled_up_to_64(encoding):
  pixels = tf.constant(np.arange(8 * 8, dtype=np.uint8).reshape(8, 8, 1) * 4)
  stored = (tf.io.encode_png(pixels) if encoding == "png"
            else tf.io.encode_jpeg(pixels, quality=95))
  assert _png_size(image_samples.thumbnail(stored, _feature(encoding))) == (64, 64, 1)


def test_large_raw_images_shrink_and_keep_their_aspect():
  feature = _feature("raw", height=200, width=100, channels=3)
  stored = tf.constant(np.zeros(200 * 100 * 3, np.uint8).tobytes())
  assert _png_size(image_samples.thumbnail(stored, feature)) == (64, 32, 3)


def test_raw_float_pixels_are_stretched_to_be_seen():
  feature = _feature("raw", height=4, width=4, channels=1, raw_dtype="float32")
  values = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
  thumb = tf.io.decode_png(base64.b64decode(image_samples.thumbnail(
      tf.constant(values.tobytes()), feature))).numpy()
  assert thumb.min() == 0 and thumb.max() == 255, (thumb.min(), thumb.max())


def test_a_label_stored_as_its_class_name_is_its_id():
  ids = tf.train.Feature(int64_list=tf.train.Int64List(value=[2]))
  names = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"cat"]))
  other = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"emu"]))
  assert [image_samples.class_id(v, ["dog", "cat", "owl"]) for v in (ids, names, other)] == [
      2, 1, -1]

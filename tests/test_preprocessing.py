"""The Transform preprocessing_fn, run through tft_beam on real digits."""

import numpy as np
import pytest
import tensorflow as tf

from components import images


@pytest.fixture(scope="module")
def by_image(transformed):
  """(raw row, transformed output) pairs keyed by the image bytes, which pass
  through Transform unchanged (Beam does not keep the input order)."""
  outputs = {o["image"].numpy(): o for o in transformed["outputs"]}
  return [(row, outputs[row["image"][0]]) for row in transformed["rows"]]


def test_every_record_comes_out_once_with_its_label(transformed, by_image):
  assert len(transformed["outputs"]) == len(transformed["rows"]) == 64
  for row, out in by_image:
    assert out["label"].numpy() == row["label"][0]


def test_numeric_features_are_z_scored(by_image):
  for name in ("ink", "brightness"):
    raw = np.array([row[name][0] for row, _ in by_image])
    out = np.array([o[name].numpy()[0] for _, o in by_image])
    np.testing.assert_allclose(out, (raw - raw.mean()) / raw.std(), atol=1e-4)


def test_categorical_feature_maps_each_value_to_one_id(by_image, transformed):
  ids = {}
  for row, out in by_image:
    ids.setdefault(row["shape"][0], set()).add(int(out["shape"].numpy()))
  assert all(len(v) == 1 for v in ids.values())
  assert len({next(iter(v)) for v in ids.values()}) == len(ids)
  counts = {k: sum(r["shape"][0] == k for r, _ in by_image) for k in ids}
  assert ids[max(counts, key=counts.get)] == {0}  # most frequent first


def test_sequences_are_shifted_padded_to_max_length(by_image):
  for row, out in by_image:
    seq = out["row_ink"].numpy()
    n = len(row["row_ink"])
    assert seq.shape == (8,)
    np.testing.assert_array_equal(seq[:n], np.array(row["row_ink"]) + 1)
    assert not seq[n:].any()


def test_sequence_longer_than_max_length_is_cut():
  from components.preprocessing import transform_feature
  from dataset.declaration import Feature
  f = Feature("s", "sequence", dtype="int", vocab_size=5, max_length=3)
  x = tf.sparse.from_dense(tf.constant([[1, 2, 3, 4], [1, 0, 0, 0]], tf.int64))
  out = transform_feature(f, x).numpy()
  np.testing.assert_array_equal(out, [[2, 3, 4], [2, 0, 0]])


def test_image_bytes_pass_through_transform_unchanged(by_image):
  for row, out in by_image:
    assert out["image"].numpy() == row["image"][0]


def _png_and_pixels():
  import io

  from PIL import Image
  pixels = (np.arange(64, dtype=np.uint8).reshape(8, 8) * 4)
  buf = io.BytesIO()
  Image.fromarray(pixels, mode="L").save(buf, format="PNG")
  return buf.getvalue(), pixels


@pytest.mark.parametrize("encoding", ["png", "raw"])
def test_decode_image_eagerly_and_inside_tf_data(encoding):
  from dataset.declaration import Feature
  png, pixels = _png_and_pixels()
  value = png if encoding == "png" else pixels.tobytes()
  f = Feature("image", "image", dtype="bytes", encoding=encoding,
              height=8, width=8, channels=1)
  expected = pixels[..., None] / 255.0
  eager = images.decode_image(tf.constant(value), f).numpy()
  in_map = next(iter(tf.data.Dataset.from_tensors(value).map(
      lambda v: images.decode_image(v, f)))).numpy()
  np.testing.assert_allclose(eager, expected, atol=1e-6)
  np.testing.assert_allclose(in_map, expected, atol=1e-6)


def test_raw_float32_images_keep_their_values():
  from dataset.declaration import Feature
  pixels = np.random.default_rng(0).normal(size=(64, 64, 1)).astype(np.float32)
  f = Feature("x", "image", dtype="bytes", encoding="raw", height=64, width=64,
              channels=1, raw_dtype="float32")
  out = images.decode_images(tf.constant([pixels.tobytes()] * 2), f).numpy()
  assert out.shape == (2, 64, 64, 1)
  np.testing.assert_array_equal(out[1], pixels)


def test_jpeg_of_another_size_is_resized_to_the_declared_size():
  from dataset.declaration import Feature
  jpeg = tf.io.encode_jpeg(tf.fill([20, 10, 3], tf.constant(200, tf.uint8))).numpy()
  f = Feature("x", "image", dtype="bytes", encoding="jpeg", height=8, width=8,
              channels=3)
  out = images.decode_image(tf.constant(jpeg), f).numpy()
  assert out.shape == (8, 8, 3)
  assert out.max() == pytest.approx(200 / 255, abs=0.02)

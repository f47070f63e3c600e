"""The Transform preprocessing_fn, run through tft_beam on real digits."""

import numpy as np
import pytest
import tensorflow as tf


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

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
  # Its position among the declared values, whatever the data holds.
  (declared,) = [f.values for f in transformed["decl"].features if f.name == "shape"]
  assert {k.decode(): v for k, v in ids.items()} == {
      value: {declared.index(value)} for value in (k.decode() for k in ids)}, ids


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


def test_category_ids_come_from_the_declaration_not_the_data():
  """A value outside the declared list is OOV, the same value always gets
  the same id, and hashed ids are the same in any process: none of it
  depends on which values a window happens to hold."""
  from components.preprocessing import MISSING_CATEGORY, category_ids
  from dataset.declaration import Feature
  declared = Feature("site", "categorical", dtype="string", values=("A", "B", "C"),
                     num_oov_buckets=2)
  ids = category_ids(declared, tf.constant(["B", "A", MISSING_CATEGORY, "Z", "Y", "Z"]))
  ids = ids.numpy().tolist()
  assert ids[:3] == [1, 0, 3] and ids[3] == ids[5] and all(4 <= i < 6 for i in ids[3:])
  assert declared.id_count == 6
  hashed = Feature("site", "categorical", dtype="string", hash_buckets=16)
  # FarmHash into 16 buckets: the same ids in every process and release, so
  # a served model and the next span's agree (A and E share a bucket: the
  # price of hashing that dataset/categories.py states).
  assert category_ids(hashed, tf.constant(["A", "B", "E"])).numpy().tolist() == [4, 8, 4]
  assert hashed.id_count == 16

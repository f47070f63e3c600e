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
  from components.transform.preprocessing import transform_feature
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
  from components.transform.preprocessing import MISSING_CATEGORY, category_ids
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


def test_scalars_share_one_analyzer_and_keep_each_its_own_mean(tmp_path):
  """Required scalar numerics are z-scored by one elementwise analyzer (one
  node in Transform's graph, not one per feature); each still gets its own
  mean and spread, whatever its dtype, and a longer numeric keeps one mean
  over all its values."""
  import functools

  import apache_beam as beam
  import tensorflow_transform.beam as tft_beam
  from apache_beam.testing.util import assert_that
  from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

  from components.transform.preprocessing import preprocessing_fn
  from dataset.declaration import Data, Declaration, Feature, Label
  decl = Declaration(name="t", path="t.yaml", data=Data(root="/d", pattern="*"),
                     label=Label("y", 2), features=(
                         Feature("a", "numeric", dtype="float"),
                         Feature("b", "numeric", dtype="int"),
                         Feature("pair", "numeric", dtype="float", length=2)))
  rng = np.random.default_rng(0)
  rows = [{"a": [float(rng.normal(5, 2))], "b": [int(rng.integers(0, 1000))],
           "pair": [float(rng.normal(0, 1)), float(rng.normal(10, 3))], "y": [i % 2]}
          for i in range(40)]
  spec = {"a": tf.io.FixedLenFeature([1], tf.float32), "b": tf.io.FixedLenFeature([1], tf.int64),
          "pair": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([1], tf.int64)}
  fn = functools.partial(preprocessing_fn, custom_config={"declaration": decl.to_dict()})
  with beam.Pipeline() as p, tft_beam.Context(temp_dir=str(tmp_path)):
    raw = p | beam.Create(rows)
    (out, _), _ = ((raw, dataset_metadata.DatasetMetadata(
        schema_utils.schema_from_feature_spec(spec)))
        | tft_beam.AnalyzeAndTransformDataset(fn, output_record_batches=False))
    assert_that(out, lambda got: _check_z_scores(rows, got))


def _check_z_scores(rows, got):
  assert len(got) == len(rows), f"expected {len(rows)} outputs, got {len(got)}"
  for name in ("a", "b"):
    raw = np.array([r[name][0] for r in rows], float)
    want = sorted((raw - raw.mean()) / raw.std())
    np.testing.assert_allclose(sorted(float(o[name][0]) for o in got), want, atol=1e-4,
                               err_msg=f"{name} is not z-scored with its own mean and spread")
  pair = np.array([r["pair"] for r in rows], float)
  want = sorted(((pair - pair.mean()) / pair.std()).ravel())
  np.testing.assert_allclose(sorted(float(v) for o in got for v in o["pair"]), want, atol=1e-4,
                             err_msg="pair is not z-scored over all its values together")

"""The Trainer's parts on real transformed digits: input_fn, export, serving."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from components import export, input_fn, model, trainer
from convert.rows import serialize
from pipeline.config import TrainingConfig

CONFIG = TrainingConfig(batch_size=16, shuffle_buffer=64, learning_rate=0.01)


@pytest.fixture(scope="module")
def parts(transformed):
  output = tft.TFTransformOutput(transformed["transform_dir"])
  return transformed["decl"], output, output.transformed_feature_spec()


def test_eval_dataset_reads_every_record_once_with_decoded_images(transformed, parts):
  decl, _, spec = parts
  batches = list(input_fn.make_dataset(transformed["files"], spec, decl, CONFIG,
                                       training=False))
  assert sum(len(y) for _, y in batches) == 64
  x, y = batches[0]
  assert x["image"].shape == (16, 8, 8, 1) and x["image"].dtype == tf.float32
  assert 0.0 <= float(tf.reduce_min(x["image"])) and float(tf.reduce_max(x["image"])) <= 1.0
  assert x["ink"].shape == (16, 1) and x["row_ink"].shape == (16, 8)
  assert x["shape"].shape == (16,) and y.dtype == tf.int64
  assert "label" not in x


def test_training_dataset_repeats_shuffles_and_keeps_full_batches(transformed, parts):
  decl, _, spec = parts
  ds = input_fn.make_dataset(transformed["files"], spec, decl, CONFIG, training=True)
  labels = [y.numpy() for _, y in ds.take(12)]  # 192 examples: 3 passes
  assert all(len(y) == 16 for y in labels)
  first_pass, second_pass = np.concatenate(labels[:4]), np.concatenate(labels[4:8])
  # Shuffled per pass: each pass holds every record once, in a new order.
  assert sorted(first_pass) == sorted(second_pass)
  assert not np.array_equal(first_pass, second_pass)


def test_augment_flips_images_only_when_asked(parts):
  decl, _, _ = parts
  image = tf.reshape(tf.range(64, dtype=tf.float32), [1, 8, 8, 1])
  features = {"image": tf.repeat(image, 32, axis=0)}
  same, _ = input_fn.augment(features, None, decl, CONFIG)
  assert np.array_equal(same["image"], features["image"])
  flipping = TrainingConfig(flip_left_right=True)
  flipped, _ = input_fn.augment(features, None, decl, flipping)
  mirrored = tf.reverse(features["image"], axis=[2])
  per_image = [np.array_equal(f, m) for f, m in zip(flipped["image"], mirrored)]
  assert any(per_image) and not all(per_image)


def test_serving_signature_takes_raw_examples_and_matches_training_inputs(
    tmp_path, transformed, parts):
  decl, output, spec = parts
  m = model.build_model(decl, trainer.vocab_sizes(output, decl), CONFIG)
  m.fit(input_fn.make_dataset(transformed["files"], spec, decl, CONFIG, True),
        steps_per_epoch=5, epochs=1, verbose=0)
  export.export_serving_model(m, output, decl, str(tmp_path / "model"))

  loaded = tf.saved_model.load(str(tmp_path / "model"))
  serve = loaded.signatures[export.SIGNATURE]
  rows = transformed["rows"][:10]
  serialized = serialize(rows)
  probs = serve(examples=tf.constant(serialized))[export.OUTPUT_KEY].numpy()
  assert probs.shape == (10, 10)
  np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)

  # The same records through the training input path give the same answer:
  # Transform and image decoding are shared, so they cannot drift apart.
  by_image = {o["image"].numpy(): o for o in transformed["outputs"]}
  batch = {k: tf.stack([by_image[r["image"][0]][k] for r in rows])
           for k in spec}
  x, _ = input_fn.parse(batch, decl)
  np.testing.assert_allclose(m.predict(x, verbose=0), probs, atol=1e-5)


def test_serving_ignores_the_label_and_needs_no_label(tmp_path, transformed, parts):
  decl, output, _ = parts
  m = model.build_model(decl, trainer.vocab_sizes(output, decl), CONFIG)
  export.export_serving_model(m, output, decl, str(tmp_path / "model"))
  serve = tf.saved_model.load(str(tmp_path / "model")).signatures[export.SIGNATURE]
  row = dict(transformed["rows"][0])
  with_label = serve(examples=tf.constant(serialize([row])))
  row.pop("label")
  without = serve(examples=tf.constant(serialize([row])))
  np.testing.assert_allclose(with_label[export.OUTPUT_KEY], without[export.OUTPUT_KEY])

"""The model builder: each feature kind alone, and the image-plus-metadata mix."""

import numpy as np
import pytest
import tensorflow as tf

from dataset.declaration import Data, Declaration, Feature, Image, Label
from dataset.training import TrainingConfig
from trainer import distribute, model

IMAGE = Feature("photo", "image", dtype="bytes", image=Image("jpeg", 32, 24, 3))
# 16x16: one conv-and-pool step (`image` takes two, the pooling test many).
# At 64x64 the tower had 4x the weights and learned so slowly that its
# 60-step loss fell barely below the first (1.39 to 1.27, above it at 15).
RAW = Feature("scan", "image", dtype="bytes",
              image=Image("raw", 16, 16, 1, raw_dtype="float32"))
NUMERIC = Feature("size", "numeric", dtype="float", length=3)
CATEGORICAL = Feature("city", "categorical", dtype="string")
INT_SEQUENCE = Feature("clicks", "sequence", dtype="int", vocab_size=50, max_length=7)
FLOAT_SEQUENCE = Feature("signal", "sequence", dtype="float", max_length=5)
VOCAB = {"city": 12}


def _decl(*features, classes=4):
  return Declaration(name="t", path="t.yaml", data=Data(root="/d", pattern="*"),
                     label=Label("y", classes), features=tuple(features))


def _batch(decl, n=6, seed=0):
  rng = np.random.default_rng(seed)
  out = {}
  for f in decl.features:
    if f.kind == "image" and f.image.encoding == "raw":
      out[f.name] = rng.random((n, *f.image.shape), np.float32)
    elif f.kind == "image":
      # PNG/JPEG pixels reach the model as uint8; it scales them itself.
      out[f.name] = rng.integers(0, 256, (n, *f.image.shape), np.uint8)
    elif f.kind == "numeric":
      out[f.name] = rng.normal(size=(n, f.length)).astype(np.float32)
    elif f.kind == "categorical":
      out[f.name] = rng.integers(0, VOCAB[f.name], n)
    elif f.dtype == "int":
      out[f.name] = rng.integers(0, f.vocab_size + 1, (n, f.max_length))
    else:
      out[f.name] = rng.normal(size=(n, f.max_length)).astype(np.float32)
  return out, rng.integers(0, decl.label.num_classes, n)


def test_every_tower_reaches_the_output():
  decl = _decl(IMAGE, NUMERIC, CATEGORICAL, INT_SEQUENCE, FLOAT_SEQUENCE)
  m = model.build_model(decl, VOCAB, TrainingConfig())
  x, _ = _batch(decl, n=2)
  base = m.predict(x, verbose=0)
  for f in decl.features:
    changed = dict(x)
    changed[f.name] = _batch(decl, n=2, seed=7)[0][f.name]
    assert not np.allclose(m.predict(changed, verbose=0), base), f.name


def test_model_is_built_with_tf_keras():
  m = model.build_model(_decl(NUMERIC), VOCAB, TrainingConfig())
  assert type(m).__module__.startswith("tf_keras")
  assert tf.keras.__name__.startswith("tf_keras")


def test_image_tower_pools_large_images_down():
  m = model.build_model(_decl(Feature("big", "image", dtype="bytes",
                                      image=Image("png", 224, 224, 3))),
                        {}, TrainingConfig())
  flat = [layer for layer in m.layers if layer.name.startswith("flatten")][0]
  assert flat.output_shape[1] <= 8 * 8 * 512


AUGMENTING = TrainingConfig(flip_left_right=True, max_crop_fraction=0.2,
                            max_brightness_delta=0.2, max_contrast_delta=0.3)


def test_uint8_images_are_scaled_inside_the_model():
  decl = _decl(IMAGE)
  m = model.build_model(decl, VOCAB, TrainingConfig())
  assert m.get_layer("photo").dtype == "uint8"
  scale = m.get_layer("photo_scale")
  x, _ = _batch(decl, n=2)
  scaled = tf.keras.Model(m.input, scale.output)(x).numpy()
  np.testing.assert_allclose(scaled, x["photo"] / 255.0, atol=1e-6)


def test_augmentation_changes_training_passes_only():
  tf.keras.utils.set_random_seed(1)
  decl = _decl(IMAGE)
  m = model.build_model(decl, VOCAB, AUGMENTING)
  x, _ = _batch(decl, n=8)
  inference = [m(x, training=False).numpy() for _ in range(3)]
  training = [m(x, training=True).numpy() for _ in range(2)]
  np.testing.assert_array_equal(inference[0], inference[1])
  np.testing.assert_array_equal(inference[0], inference[2])
  assert not np.allclose(training[0], training[1]), "training passes identical"
  # The same weights without augmentation layers give the inference output.
  plain = model.build_model(decl, VOCAB, TrainingConfig())
  plain.set_weights(m.get_weights())
  np.testing.assert_allclose(plain(x, training=False).numpy(), inference[0],
                             atol=1e-6)


@pytest.mark.parametrize("gpus, expected", [
    ([], "float32"), ([(7, 5)], "mixed_float16"), ([(8, 0), (7, 0)], "mixed_float16"),
    ([(6, 1)], "float32"), ([(8, 6), (6, 0)], "float32")])
def test_auto_precision_is_mixed_only_when_every_gpu_has_tensor_cores(gpus, expected):
  assert distribute.precision_policy("auto", gpus) == expected
  assert distribute.precision_policy("float32", gpus) == "float32"


def test_a_missing_sequence_gives_finite_probabilities():
  """A missing sequence is all padding: its masked mean has no step to
  average, which Keras' GlobalAveragePooling1D turns into NaN."""
  decl = _decl(NUMERIC, INT_SEQUENCE)
  m = model.build_model(decl, VOCAB, TrainingConfig())
  x, _ = _batch(decl)
  x["clicks"][:3] = 0  # three records without the sequence
  probs = m(x, training=False).numpy()
  assert np.isfinite(probs).all(), probs
  np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_autograph_leaves_tf_keras_own_code_alone():
  """AutoGraph skips `keras` but not `tf_keras`; converting tf-keras's train
  step cost every process's first fit about 10 s (trainer/model.py). Building
  a model sets the rule up."""
  from tensorflow.python.autograph.impl import conversion
  from tf_keras.src.engine import training
  model.build_model(_decl(NUMERIC), VOCAB, TrainingConfig())  # as the Trainer does
  assert conversion.is_allowlisted(training.Model.train_step), \
      "AutoGraph would convert tf-keras's Model.train_step"

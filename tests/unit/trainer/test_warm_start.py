"""Transfer learning and warm starts: real Keras models, real weights files."""

import copy
import os

import numpy as np
import pytest
import tensorflow as tf

import serving
from dataset import declaration
from dataset.training import TrainingConfig
from tests.conftest import digits_raw, write_declaration
from trainer import model, run, warm_start

keras = tf.keras


def photo_declaration(tmp_path, **backbone) -> declaration.Declaration:
  raw = copy.deepcopy(digits_raw())
  raw.pop("schema")
  raw["data"]["root"] = str(tmp_path)
  raw["label"] = {"name": "label", "num_classes": 2}
  raw["features"] = {"photo": {"kind": "image", "encoding": "raw", "height": 32,
                               "width": 32, "channels": 3,
                               "backbone": {"name": "MobileNetV2", **backbone}}}
  return declaration.load(write_declaration(tmp_path, raw))


def pretrained(path: str) -> str:
  """A backbone's weights, saved as a user saves them before a run. Nothing
  may be downloaded, so here "pretrained" is a forward pass in training
  mode over random photos that sets its batch-norm statistics to theirs
  (momentum 0), as a trained backbone's statistics are its data's."""
  backbone = keras.applications.MobileNetV2(input_shape=(32, 32, 3), include_top=False,
                                            weights=None)
  for layer in backbone.layers:
    if isinstance(layer, keras.layers.BatchNormalization):
      layer.momentum = 0.0
  backbone(np.random.RandomState(1).rand(16, 32, 32, 3).astype("float32") * 2 - 1,
           training=True)
  backbone.save_weights(path)
  return path


@pytest.fixture(scope="module")
def weights_file(tmp_path_factory):
  return pretrained(str(tmp_path_factory.mktemp("weights") / "mobilenet_v2.h5"))


def photos(n=32, batch=8):
  rng = np.random.RandomState(0)
  labels = rng.randint(0, 2, n)
  images = (rng.rand(n, 32, 32, 3) * 80 + labels[:, None, None, None] * 150).astype(np.uint8)
  return tf.data.Dataset.from_tensor_slices(({"photo": images}, labels)).batch(batch).repeat()


def backbone_weights(m):
  (backbone,) = model.backbones(m)
  return [w.copy() for w in backbone.get_weights()]


def head_weights(m):
  return [w.copy() for w in m.get_layer("probabilities").get_weights()]


def same(a, b):
  return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_frozen_phase_keeps_the_backbone_and_fine_tuning_changes_it(tmp_path, weights_file):
  decl = photo_declaration(tmp_path, weights=weights_file, frozen_epochs=1,
                           fine_tune_learning_rate=0.01)
  saved = keras.applications.MobileNetV2(input_shape=(32, 32, 3), include_top=False,
                                         weights=None)
  saved.load_weights(weights_file)
  both = model.build_model(decl, {}, TrainingConfig(train_steps=4, epochs=2))
  # The weights file is loaded into the backbone.
  assert same(backbone_weights(both), saved.get_weights())
  head_before = head_weights(both)
  after_epoch = {}

  class AfterEachEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
      after_epoch[epoch] = (backbone_weights(both), head_weights(both))

  run.fit_in_phases(both, tf.distribute.get_strategy(), decl,
                    TrainingConfig(train_steps=4, epochs=2), photos(), None,
                    heartbeat=AfterEachEpoch())
  # The first epoch is frozen: the backbone (batch-norm statistics
  # included) is exactly as loaded, while the new layers learned.
  frozen_backbone, frozen_head = after_epoch[0]
  assert same(frozen_backbone, saved.get_weights())
  assert not same(frozen_head, head_before)
  # The second epoch fine-tunes: the backbone's trainable weights moved.
  (backbone,) = model.backbones(both)
  assert backbone.trainable
  moved = sum(not np.array_equal(a, b) for a, b in zip(after_epoch[1][0], saved.get_weights()))
  trainable = len(backbone.trainable_weights)
  assert moved > trainable // 2, f"{moved} weights moved, of {trainable} trainable"


def test_a_backbone_without_a_weights_file_is_refused_in_one_line(tmp_path):
  """Random weights, used with their batch-norm statistics as loaded, give
  the same output for every image: such a backbone never learns."""
  with pytest.raises(declaration.DeclarationError) as e:
    photo_declaration(tmp_path)
  (line,) = str(e.value).splitlines()
  assert "features.photo.backbone.weights': expected a pretrained weights file (.h5) for " \
         "MobileNetV2: a backbone from random weights does not learn here; or drop " \
         "`backbone:` for the built-in CNN" in line, line


def test_weights_that_never_trained_are_refused_naming_the_file(tmp_path):
  random = str(tmp_path / "random.h5")
  keras.applications.MobileNetV2(input_shape=(32, 32, 3), include_top=False,
                                 weights=None).save_weights(random)
  decl = photo_declaration(tmp_path, weights=random)
  with pytest.raises(ValueError) as e:
    model.build_model(decl, {}, TrainingConfig())
  assert str(e.value).startswith(f"backbone weights {random}: every batch-norm layer holds "
                                 "its initial statistics (mean 0, variance 1)"), str(e.value)
  assert "give `weights:` a pretrained file, or drop `backbone:`" in str(e.value)


def test_random_weights_do_not_learn_where_pretrained_ones_do(tmp_path, weights_file):
  """The cause the refusal guards against: used as loaded, a backbone whose
  batch-norm statistics never moved answers every image alike; one whose
  statistics were learned tells the two classes of `photos` apart."""
  x, _ = next(iter(photos(16, batch=16).take(1)))
  images = tf.cast(x["photo"], tf.float32) / 127.5 - 1.0
  spread = {}
  for name in ("random", "pretrained"):
    backbone = keras.applications.MobileNetV2(input_shape=(32, 32, 3), include_top=False,
                                              weights=None)
    if name == "pretrained":
      backbone.load_weights(weights_file)
    features = tf.reduce_mean(backbone(images, training=False), axis=[1, 2])
    spread[name] = float(tf.reduce_mean(tf.math.reduce_std(features, axis=0)))
  assert spread["random"] < 1e-6 < 1e-3 < spread["pretrained"], spread


@pytest.mark.parametrize("backbone, expected", [
    ({"name": "ResNet9000"}, "features.photo.backbone.name': expected one of MobileNetV2"),
    ({"name": "MobileNetV2", "weights": "missing.h5"},
     "expected an existing weights file (.h5), saved beforehand: nothing is downloaded"),
    ({"name": "MobileNetV2", "fine_tune_learning_rate": 2},
     "fine_tune_learning_rate': expected a number in (0, 1)"),
])
def test_bad_backbones_are_named(tmp_path, backbone, expected):
  with pytest.raises(declaration.DeclarationError, match=None) as e:
    photo_declaration(tmp_path, **backbone)
  assert expected in str(e.value)


def test_a_backbone_needs_images_of_its_smallest_size(tmp_path):
  raw = copy.deepcopy(digits_raw())
  raw["features"]["image"]["backbone"] = {"name": "MobileNetV2"}
  raw.pop("schema")
  with pytest.raises(declaration.DeclarationError) as e:
    declaration.load(write_declaration(tmp_path, raw))
  assert "at least 32x32 pixels for MobileNetV2" in str(e.value) and "8x8" in str(e.value)


def small_model(width):
  inputs = keras.Input((3,))
  return keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(width)(inputs)))


def served_model(tmp_path, m, splits=("train_span1",)):
  folder = str(tmp_path / "served" / "1795355698")
  os.makedirs(folder)
  open(os.path.join(folder, "saved_model.pb"), "wb").close()
  warm_start.save(m, folder, splits)
  return folder


def test_warm_start_loads_matching_weights_and_names_the_source(tmp_path):
  old = small_model(4)
  folder = served_model(tmp_path, old)
  new = small_model(4)
  assert warm_start.warm_start(new, folder) == f"warm start: from {folder}"
  assert same(new.get_weights(), old.get_weights())
  assert serving.trained_on(folder) == ["train_span1"]


def test_a_changed_architecture_trains_from_scratch_and_says_why(tmp_path):
  folder = served_model(tmp_path, small_model(4))
  new = small_model(5)
  before = new.get_weights()
  note = warm_start.warm_start(new, folder)
  assert note.startswith(f"warm start: none, the architecture changed since {folder}")
  assert "shape [3, 4] there, [3, 5] now" in note and note.endswith("training from scratch")
  assert same(new.get_weights(), before)
  assert warm_start.warm_start(new, None) == (
      "warm start: none, no model is served yet; training from scratch")

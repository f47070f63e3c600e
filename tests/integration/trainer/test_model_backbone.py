"""Transfer learning on a real MobileNetV2: its weights file loaded, the frozen
phase and fine-tuning, and why weights that never trained are refused."""

import numpy as np
import pytest
import tensorflow as tf

from dataset.training import TrainingConfig
from tests.unit.trainer.test_warm_start import photo_declaration, same
from trainer import model, run

keras = tf.keras


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

"""Transfer learning and warm starts: real Keras models, real weights files."""

import copy
import os

import numpy as np
import pytest
import tensorflow as tf

import serving
from dataset import declaration
from tests.conftest import digits_raw, write_declaration
from trainer import warm_start

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


def same(a, b):
  return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_backbone_without_a_weights_file_is_refused_in_one_line(tmp_path):
  """Random weights, used with their batch-norm statistics as loaded, give
  the same output for every image: such a backbone never learns."""
  with pytest.raises(declaration.DeclarationError) as e:
    photo_declaration(tmp_path)
  (line,) = str(e.value).splitlines()
  assert "features.photo.backbone.weights': expected a pretrained weights file (.h5) for " \
         "MobileNetV2: a backbone from random weights does not learn here; or drop " \
         "`backbone:` for the built-in CNN" in line, line


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

"""Each kind of feature trained for real: the model maps it to class
probabilities and its loss falls; mixed precision trains with a float32
output."""

import numpy as np
import pytest
import tensorflow as tf

from dataset.declaration import Feature, Image
from dataset.training import TrainingConfig
from tests.unit.trainer.test_model import (
  AUGMENTING,
  CATEGORICAL,
  FLOAT_SEQUENCE,
  IMAGE,
  INT_SEQUENCE,
  NUMERIC,
  RAW,
  VOCAB,
  _batch,
  _decl,
)
from trainer import model

CASES = {
    "image": (IMAGE,), "raw image": (RAW,), "numeric": (NUMERIC,),
    "categorical": (CATEGORICAL,), "int sequence": (INT_SEQUENCE,),
    "float sequence": (FLOAT_SEQUENCE,),
    "image plus metadata": (IMAGE, NUMERIC, CATEGORICAL, INT_SEQUENCE),
}



@pytest.mark.parametrize("features", CASES.values(), ids=CASES.keys())
def test_model_maps_each_kind_to_class_probabilities_and_learns(features):
  tf.keras.utils.set_random_seed(0)
  decl = _decl(*features)
  m = model.build_model(decl, VOCAB, TrainingConfig(learning_rate=3e-3))
  assert sorted(m.input_names) == sorted(f.name for f in features)
  x, y = _batch(decl)
  probs = m.predict(x, verbose=0)
  assert probs.shape == (6, 4)
  np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
  first = m.train_on_batch(x, y)[0]
  for _ in range(60):
    last = m.train_on_batch(x, y)[0]
  assert last < first  # it learns: gradients flow from the loss to every tower


def test_mixed_precision_model_trains_with_a_float32_output():
  # The GPU path (mixed_float16), run on the CPU.
  tf.keras.utils.set_random_seed(0)
  # Small, because float16 convolutions on a CPU are emulated and slow.
  decl = _decl(Feature("photo", "image", dtype="bytes", image=Image("png", 8, 8, 3)),
               NUMERIC)
  try:
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    m = model.build_model(decl, VOCAB, AUGMENTING)
  finally:
    tf.keras.mixed_precision.set_global_policy("float32")
  assert m.get_layer("photo_tower").compute_dtype == "float16"
  assert isinstance(m.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
  x, y = _batch(decl, n=8)
  assert m(x).dtype == tf.float32
  first = m.train_on_batch(x, y)[0]
  # Each float16 step is slow on a CPU; 10 steps halve the loss (1.45 to 0.67).
  for _ in range(10):
    last = m.train_on_batch(x, y)[0]
  assert np.isfinite(last) and last < first, (first, last)

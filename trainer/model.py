"""The Keras model, built from the declaration: one tower per kind of feature.

Towers:
  image        a small CNN per image feature, pooled until the feature map is
               at most 8 pixels on a side, then flattened; or, for transfer
               learning, a Keras applications backbone (the declaration's
               `backbone`), pooled.
  numeric      all numeric features (and the indicators of missing values)
               concatenated, then one dense layer.
  categorical  an embedding per feature.
  sequence     int: a masked embedding, averaged over the sequence;
               float: one dense layer over the padded values.
The towers are concatenated and feed a softmax over the label's classes
(cross-entropy loss), or, for a regression label, one linear unit (mean
squared error, with RMSE and MAE reported).
Images come in as pixels of their stored dtype; the image tower starts with
the scaling and augmentation layers of `trainer.augment`. The softmax is
float32 even under mixed precision, where float16 would round probabilities
and the loss.
"""

import os
from typing import Dict, List, Mapping

import numpy as np
import tensorflow as tf

from dataset import metrics
from dataset.declaration import Declaration, Feature
from dataset.training import TrainingConfig
from trainer.augment import scale_and_augment
from trainer.image_decoding import pixel_dtype

keras = tf.keras


def skip_autograph_for_libraries() -> None:
  """Process set-up for training, called before a model or an input
  pipeline with the Transform layer is traced (`build_model`, `run.train`);
  idempotent. AutoGraph leaves the `keras` package alone (its DoNotConvert rules) but
  not `tf_keras`, the same code renamed: the first `fit` in a process then
  spends about 10 s converting tf-keras's own train step, loss and metric
  code to graph code it never needed (measured: 10.3 s, against 1.8 s for
  the same first fit with this rule; bench/e2e_bench.py). tf-keras's code is
  written for tf.function without conversion, as Keras 2's always ran.
  tf.Transform's layer likewise: TFT traces its own functions with AutoGraph
  off, yet the input pipeline's maps and the serving signature had it
  converted on every trace (the Trainer at 5k rows: 6.0-6.1 s, 5.1-5.3 s
  without)."""
  from tensorflow.python.autograph.core import config
  for package in ("tf_keras", "tensorflow_transform"):
    if not any(isinstance(r, config.DoNotConvert) and r.matches(f"{package}.src")
               for r in config.CONVERSION_RULES):
      config.CONVERSION_RULES = (config.DoNotConvert(package),) + tuple(config.CONVERSION_RULES)


def _check_keras() -> None:
  # trainer/__init__.py chooses tf-keras; a TF that loaded Keras 3 before
  # that ran would mix two Keras versions in one model and fail far from here.
  if not keras.__name__.startswith("tf_keras"):
    raise RuntimeError(
        f"tf.keras is {keras.__name__}, expected tf_keras: import `trainer` "
        "before TensorFlow touches tf.keras (it sets TF_USE_LEGACY_KERAS=1)")


def model_input(f: Feature) -> keras.Input:
  """The Keras input of one transformed feature."""
  if f.kind == "image":
    return keras.Input(f.image.shape, name=f.name,
                       dtype=pixel_dtype(f))
  if f.kind == "numeric":
    return keras.Input((f.length,), name=f.name)
  if f.kind == "categorical":
    return keras.Input((), name=f.name, dtype=tf.int64)
  dtype = tf.int64 if f.dtype == "int" else tf.float32
  return keras.Input((f.max_length,), name=f.name, dtype=dtype)


# backbone -> (its keras.applications constructor, the Rescaling that maps
# [0, 1] pixels to the range it was trained on).
_BACKBONE_INPUTS = {"MobileNetV2": (2.0, -1.0), "MobileNetV3Small": (255.0, 0.0),
                    "EfficientNetB0": (255.0, 0.0)}


def backbone_tower(x, f: Feature):
  """A Keras applications backbone, with the weights file if there is one.

  weights=None: nothing is ever downloaded. The backbone is called with
  training=False, so its batch-norm statistics stay as loaded in both
  phases (the usual fine-tuning recipe); `backbones` finds it again. That
  is also why it needs pretrained weights (`_require_pretrained`).
  """
  image = f.image
  if image.channels == 1:
    x = keras.layers.Concatenate(name=f"{f.name}_rgb")([x, x, x])
  elif image.channels == 4:
    x = x[..., :3]  # the alpha channel has no counterpart in the backbone
  scale, offset = _BACKBONE_INPUTS[image.backbone.name]
  x = keras.layers.Rescaling(scale, offset, name=f"{f.name}_backbone_input")(x)
  base = getattr(keras.applications, image.backbone.name)(
      input_shape=(image.height, image.width, 3), include_top=False, weights=None)
  base.load_weights(_local(image.backbone.weights))
  _require_pretrained(base, image.backbone.weights)
  x = base(x, training=False)
  x = keras.layers.GlobalAveragePooling2D()(x)
  return keras.layers.Dense(128, activation="relu", name=f"{f.name}_tower")(x)


def _require_pretrained(base: keras.Model, path: str) -> None:
  """Refuses weights that never trained: used as loaded, batch-norm
  statistics at their initial values (mean 0, variance 1) let random
  convolutions shrink an image layer after layer (MobileNetV2's output at
  96x96: about 1e-12, the same for every image), so nothing learns."""
  norms = [layer for layer in base.layers
           if isinstance(layer, keras.layers.BatchNormalization)]
  if norms and all(np.all(n.moving_mean.numpy() == 0) and np.all(n.moving_variance.numpy() == 1)
                   for n in norms):
    raise ValueError(
        f"backbone weights {path}: every batch-norm layer holds its initial statistics "
        "(mean 0, variance 1): these weights were never trained, and a backbone from them "
        "does not learn; give `weights:` a pretrained file, or drop `backbone:` for the "
        "built-in CNN")


def _local(path: str) -> str:
  """A local copy of a weights file on gs:// or another URI (h5 needs one)."""
  if "://" not in path:
    return path
  import tempfile
  local = os.path.join(tempfile.mkdtemp(), os.path.basename(path))
  tf.io.gfile.copy(path, local)
  return local


def backbones(model: keras.Model) -> List[keras.Model]:
  """The backbones inside a model built by `build_model`."""
  return [layer for layer in model.layers if isinstance(layer, keras.Model)]


def image_tower(x, f: Feature, config: TrainingConfig):
  x = scale_and_augment(x, f, config)
  if f.image.backbone:
    return backbone_tower(x, f)
  filters = 32
  while min(x.shape[1], x.shape[2]) > 8:
    x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    filters = min(filters * 2, 256)
  x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
  x = keras.layers.Conv2D(filters * 2, 3, padding="same", activation="relu")(x)
  x = keras.layers.Flatten()(x)
  return keras.layers.Dense(128, activation="relu", name=f"{f.name}_tower")(x)


def categorical_tower(x, f: Feature, vocab_size: int):
  dim = max(2, min(16, round(vocab_size ** 0.5) + 1))
  return keras.layers.Embedding(vocab_size, dim, name=f"{f.name}_embedding")(x)


class MaskedMean(keras.layers.Layer):
  """The mean over a sequence's real (unmasked) steps.

  Keras' GlobalAveragePooling1D divides by the number of real steps, which
  is 0 for a missing (all-padding) sequence: a NaN that reaches the output
  for that record. An empty sequence averages to zeros here instead.
  """

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.supports_masking = True

  def call(self, inputs, mask=None):
    if mask is None:
      return tf.reduce_mean(inputs, axis=1)
    weights = tf.expand_dims(tf.cast(mask, inputs.dtype), -1)
    count = tf.maximum(tf.reduce_sum(weights, axis=1), tf.cast(1, inputs.dtype))
    return tf.reduce_sum(inputs * weights, axis=1) / count

  def compute_mask(self, inputs, mask=None):
    return None


def sequence_tower(x, f: Feature):
  if f.dtype == "int":
    x = keras.layers.Embedding(f.vocab_size + 1, 16, mask_zero=True,
                               name=f"{f.name}_embedding")(x)
    return MaskedMean(name=f"{f.name}_mean")(x)
  return keras.layers.Dense(16, activation="relu", name=f"{f.name}_tower")(x)


def build_model(decl: Declaration, vocab_sizes: Mapping[str, int],
                config: TrainingConfig) -> keras.Model:
  """Builds and compiles the model.

  Args:
    decl: the dataset declaration.
    vocab_sizes: categorical feature name -> number of ids, OOV buckets
      included (from the Transform output).
    config: the learning rate, the head's width and dropout, and the image
      augmentations.

  Returns:
    A compiled model that maps transformed inputs (images decoded to pixels)
    to class probabilities, or to the predicted value [batch, 1]. Build it
    under the distribution strategy's scope.
  """
  skip_autograph_for_libraries()
  _check_keras()
  inputs: Dict[str, keras.Input] = {f.name: model_input(f) for f in decl.features}
  for f in decl.features:
    if f.missing_indicator:
      inputs[f.missing_indicator] = keras.Input((1,), name=f.missing_indicator)
  towers: List = [image_tower(inputs[f.name], f, config)
                  for f in decl.of_kind("image")]
  numeric = [inputs[f.name] for f in decl.of_kind("numeric")]
  numeric += [inputs[f.missing_indicator] for f in decl.features if f.missing_indicator]
  if numeric:
    x = numeric[0] if len(numeric) == 1 else keras.layers.Concatenate()(numeric)
    towers.append(keras.layers.Dense(32, activation="relu",
                                     name="numeric_tower")(x))
  towers += [categorical_tower(inputs[f.name], f, vocab_sizes[f.name])
             for f in decl.of_kind("categorical")]
  towers += [sequence_tower(inputs[f.name], f) for f in decl.of_kind("sequence")]
  x = towers[0] if len(towers) == 1 else keras.layers.Concatenate()(towers)
  x = keras.layers.Dense(config.width, activation="relu")(x)
  x = keras.layers.Dropout(config.dropout)(x)
  if decl.label.kind == "regression":
    outputs = keras.layers.Dense(1, dtype="float32", name="value")(x)
  else:
    outputs = keras.layers.Dense(decl.label.num_classes, activation="softmax",
                                 dtype="float32", name="probabilities")(x)
  model = keras.Model(inputs=inputs, outputs=outputs)
  compile_model(model, decl, config.learning_rate)
  return model


def compile_model(model: keras.Model, decl: Declaration, learning_rate: float) -> None:
  """Compiles with a fresh Adam optimizer: once built, and again for each
  phase of transfer learning (freezing a backbone needs a recompile)."""
  loss = "mse" if decl.label.kind == "regression" else "sparse_categorical_crossentropy"
  model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=loss,
                metrics=training_metrics(decl.label.kind))


def training_metrics(label_kind: str) -> List[keras.metrics.Metric]:
  """The Keras metrics the Trainer reports per epoch (dataset/metrics.py),
  named as the declaration names them; the label kind's default first."""
  return [getattr(keras.metrics, m.class_name)(name=m.name)
          for m in metrics.for_label(label_kind).values() if m.in_training]

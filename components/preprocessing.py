"""The Transform `preprocessing_fn`, built from the dataset declaration.

Transformed features keep their raw names. What each kind becomes:

  image        the encoded or raw bytes, unchanged, shape [batch] string.
               Decoding happens in the input_fn and the serving signature:
               decoding inside Transform needs `tf.map_fn`, breaks on shapes and
               blows memory (TFX issues #80, #4852, #5777).
  numeric      z-scored float32, shape [batch, length].
  categorical  vocabulary index int64, shape [batch]; the vocabulary file is
               named after the feature, so the model can ask for its size.
  sequence     int: ids shifted by one (0 pads), float: z-scored values;
               padded or cut to max_length, shape [batch, max_length].
  label        int64, shape [batch].
"""

from typing import Any, Dict, Mapping

import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration, Feature


def _dense(x, width: int, default) -> tf.Tensor:
  """[batch, width] dense values of a dense or sparse input, padded or cut."""
  if isinstance(x, tf.SparseTensor):
    x = tf.sparse.to_dense(x, default_value=default)
  x = x[:, :width]
  return tf.pad(x, [[0, 0], [0, width - tf.shape(x)[1]]],
                constant_values=default)


def _sequence(f: Feature, x) -> tf.Tensor:
  if f.dtype == "int":
    if isinstance(x, tf.SparseTensor):
      x = tf.SparseTensor(x.indices, x.values + 1, x.dense_shape)
    else:
      x = x + 1
    return tf.ensure_shape(_dense(x, f.max_length, tf.constant(0, x.dtype)),
                           [None, f.max_length])
  x = tf.cast(x, tf.float32) if not isinstance(x, tf.SparseTensor) else \
      tf.SparseTensor(x.indices, tf.cast(x.values, tf.float32), x.dense_shape)
  x = tft.scale_to_z_score(x)
  return tf.ensure_shape(_dense(x, f.max_length, 0.0), [None, f.max_length])


def transform_feature(f: Feature, x) -> tf.Tensor:
  """The transformed tensor of one declared feature (see the module docstring)."""
  if f.kind == "image":
    return tf.reshape(_dense(x, 1, b""), [-1])
  if f.kind == "numeric":
    x = tf.cast(_dense(x, f.length, tf.constant(0, x.dtype)), tf.float32)
    return tft.scale_to_z_score(x)
  if f.kind == "categorical":
    x = _dense(x, 1, tf.constant(b"" if x.dtype == tf.string else 0, x.dtype))
    if x.dtype != tf.string:
      x = tf.strings.as_string(x)
    return tf.reshape(tft.compute_and_apply_vocabulary(
        x, top_k=f.top_k, num_oov_buckets=f.num_oov_buckets,
        vocab_filename=f.name), [-1])
  return _sequence(f, x)


def preprocessing_fn(inputs: Mapping[str, Any],
                     custom_config: Dict[str, Any]) -> Dict[str, tf.Tensor]:
  """TFX Transform entry point.

  Args:
    inputs: raw features, as parsed by Transform from the schema.
    custom_config: holds `declaration`, a `Declaration.to_dict()`.

  Returns:
    The transformed features and the label.
  """
  decl = Declaration.from_dict(custom_config["declaration"])
  outputs = {f.name: transform_feature(f, inputs[f.name]) for f in decl.features}
  label = inputs[decl.label.name]
  outputs[decl.label.name] = tf.reshape(_dense(label, 1, tf.constant(0, label.dtype)),
                                        [-1])
  return outputs

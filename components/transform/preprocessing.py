"""The Transform `preprocessing_fn`, built from the dataset declaration.

Transformed features keep their raw names. What each kind becomes:

  image        the encoded or raw bytes, unchanged, shape [batch] string.
               Decoding happens in the input_fn and the serving signature:
               decoding inside Transform needs `tf.map_fn`, breaks on shapes and
               blows memory (TFX issues #80, #4852, #5777).
  numeric      z-scored float32, shape [batch, length]. Optional ones
               (`required: false`): a missing value is filled with the
               training mean (or the declared `default`), and
               `<name>__missing` (float32 [batch, 1], 1 where it was
               missing) tells the model so.
  categorical  an id, int64, shape [batch]: its position among the declared
               `values` (others in OOV buckets), or its hash's bucket;
               never a vocabulary computed from the data (dataset/
               categories.py). A missing value is the category
               MISSING_CATEGORY, which gets its own id like any other.
  sequence     int: ids shifted by one (0 pads), float: z-scored values;
               padded or cut to max_length, shape [batch, max_length]. A
               missing sequence is an empty one: all padding.
  label        classes: int64 class id, shape [batch]; names stored as
               strings become their position in the declared `classes`.
               regression: float32, shape [batch].
"""

from typing import Any, Dict, List, Mapping

import tensorflow as tf
import tensorflow_transform as tft

from dataset.declaration import Declaration, Feature

MISSING_CATEGORY = "__missing__"


def _dense(x, width: int, default) -> tf.Tensor:
  """[batch, width] dense values of a dense or sparse input, padded or cut."""
  if isinstance(x, tf.SparseTensor):
    x = tf.sparse.to_dense(x, default_value=default)
  elif x.shape.rank == 2 and x.shape[1] == width:
    return x  # a fixed-length feature as the schema parses it: nothing to do
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


def _map_values(x, fn):
  """fn over a dense tensor's or a SparseTensor's values."""
  if isinstance(x, tf.SparseTensor):
    return tf.SparseTensor(x.indices, fn(x.values), x.dense_shape)
  return fn(x)


def _with_nan(x, length: int) -> tf.Tensor:
  """[batch, length] float32 values, NaN where a record had none."""
  x = _map_values(x, lambda v: tf.cast(v, tf.float32))
  return tf.ensure_shape(_dense(x, length, tf.constant(float("nan"))), [None, length])


def _required_numeric(f: Feature, x) -> tf.Tensor:
  """[batch, length] float32 values of a required numeric feature."""
  return tf.cast(_dense(x, f.length, tf.constant(0, x.dtype)), tf.float32)


def _optional_numeric(f: Feature, x) -> tf.Tensor:
  # Mean and spread over the values present, not over the filled ones.
  values = x.values if isinstance(x, tf.SparseTensor) else tf.reshape(x, [-1])
  values = tf.cast(values, tf.float32)
  mean, std = tft.mean(values), tf.sqrt(tft.var(values))
  # No value at all in the training data: nothing to centre on.
  mean = tf.where(tf.math.is_nan(mean), 0.0, mean)
  std = tf.where(tf.math.is_nan(std), 1.0, std)
  dense = _with_nan(x, f.length)
  fill = mean if f.default is None else tf.constant(f.default, tf.float32)
  filled = tf.where(tf.math.is_nan(dense), fill, dense)
  return (filled - mean) / tf.where(std > 0, std, 1.0)


def missing_indicator(f: Feature, x) -> tf.Tensor:
  """float32 [batch, 1]: 1 where the record lacked the (optional numeric) feature."""
  missing = tf.reduce_any(tf.math.is_nan(_with_nan(x, f.length)), axis=1, keepdims=True)
  return tf.cast(missing, tf.float32)


def transform_feature(f: Feature, x) -> tf.Tensor:
  """The transformed tensor of one declared feature (see the module docstring)."""
  if f.kind == "image":
    return tf.reshape(_dense(x, 1, b""), [-1])
  if f.kind == "numeric" and not f.required:
    return _optional_numeric(f, x)
  if f.kind == "numeric":
    return tft.scale_to_z_score(_required_numeric(f, x))
  if f.kind == "categorical":
    if x.dtype != tf.string:
      x = _map_values(x, tf.strings.as_string)
    x = tf.reshape(_dense(x, 1, tf.constant(MISSING_CATEGORY)), [-1])
    return category_ids(f, x)
  return _sequence(f, x)


def scalars_z_scored(features: List[Feature], inputs: Mapping[str, Any]) -> Dict[str, tf.Tensor]:
  """Required scalar numeric features, z-scored by one elementwise analyzer.

  The same mean and variance per feature as one `scale_to_z_score` each,
  but one analyzer in Transform's graph instead of one per feature: every
  analyzer is traced, planned and saved several times per run, which cost
  a 25-feature table most of Transform's time at small sizes.
  """
  columns = [tf.reshape(_required_numeric(f, inputs[f.name]), [-1, 1]) for f in features]
  scaled = tft.scale_to_z_score(tf.concat(columns, axis=1), elementwise=True)
  return {f.name: scaled[:, i:i + 1] for i, f in enumerate(features)}


def category_ids(f: Feature, x: tf.Tensor) -> tf.Tensor:
  """A categorical feature's ids (dataset/categories.py says why neither
  comes from the data): its position among the declared values, the
  missing value next, OOV buckets after; or its hash's bucket."""
  if not f.values:
    return tf.strings.to_hash_bucket_fast(x, f.hash_buckets)
  keys = list(f.values) + [MISSING_CATEGORY]
  table = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
      tf.constant(keys), tf.range(len(keys), dtype=tf.int64)), f.num_oov_buckets)
  return table.lookup(x)


def _all_missing(f: Feature, like) -> tf.SparseTensor:
  """An optional feature that no training record had, so the schema that
  SchemaGen inferred left it out: every record lacks it. `like` is any other
  input, for the batch size (not the label: serving has none)."""
  batch = like.dense_shape[0] if isinstance(like, tf.SparseTensor) else tf.shape(
      like, out_type=tf.int64)[0]
  dtype = {"float": tf.float32, "int": tf.int64, "string": tf.string}[f.dtype]
  return tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0], dtype),
                         tf.stack([batch, 1]))


def preprocessing_fn(inputs: Mapping[str, Any],
                     custom_config: Dict[str, Any]) -> Dict[str, tf.Tensor]:
  """TFX Transform entry point.

  Args:
    inputs: raw features, as parsed by Transform from the schema.
    custom_config: holds `declaration`, a `Declaration.contract()`.

  Returns:
    The transformed features and the label.
  """
  decl = Declaration.from_dict(custom_config["declaration"])
  inputs = dict(inputs)
  present = [f.name for f in decl.features if f.name in inputs]
  for f in decl.features:
    if f.name not in inputs and not f.required:
      inputs[f.name] = _all_missing(f, inputs[present[0]])
  scalars = [f for f in decl.features if f.kind == "numeric" and f.required and f.length == 1]
  outputs = scalars_z_scored(scalars, inputs) if len(scalars) > 1 else {}
  outputs.update({f.name: transform_feature(f, inputs[f.name])
                  for f in decl.features if f.name not in outputs})
  for f in decl.features:
    if f.missing_indicator:
      outputs[f.missing_indicator] = missing_indicator(f, inputs[f.name])
  outputs[decl.label.name] = transform_label(decl, inputs[decl.label.name])
  return outputs


def transform_label(decl: Declaration, label) -> tf.Tensor:
  """The label as the model learns it (see the module docstring)."""
  label = tf.reshape(_dense(label, 1, tf.zeros([], label.dtype)), [-1])
  if decl.label.kind == "regression":
    return tf.cast(label, tf.float32)
  if label.dtype == tf.string:
    # A fixed table from the declared list, not a vocabulary computed from the
    # data: ids never change between runs or spans. The records were checked
    # against the list before the run.
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(decl.label.classes)),
        tf.range(len(decl.label.classes), dtype=tf.int64)), default_value=-1)
    return table.lookup(label)
  return tf.cast(label, tf.int64)

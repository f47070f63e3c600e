"""The Trainer's input pipeline, split by stage.

One reader owns the order: read -> shuffle -> batch -> decode -> parse ->
augment -> prefetch. Records are batched before they are decoded, because one
vectorized `parse_example` over a batch is far cheaper than one parse per
record; every stage after that runs in parallel on whole batches.

TFX's own `data_accessor.tf_dataset_factory` is not used: it parses with one
thread and ignores its parser-thread, prefetch and ordering options (TFX
issue #4814).
"""

from typing import Dict, List, Mapping, Tuple

import tensorflow as tf

from components.images import decode_images
from dataset.declaration import Declaration
from pipeline.config import TrainingConfig

AUTOTUNE = tf.data.AUTOTUNE


def decode(serialized: tf.Tensor, feature_spec: Mapping) -> Dict[str, tf.Tensor]:
  """Parses a [batch] of serialized transformed Examples.

  Returns:
    Every transformed feature, keyed by name (see `components.preprocessing`):
    images as [batch] string, numeric as [batch, length] float32, categorical
    as [batch] int64, sequences as [batch, max_length], the label as [batch]
    int64.
  """
  return tf.io.parse_example(serialized, feature_spec)


def parse(features: Dict[str, tf.Tensor], decl: Declaration
          ) -> Tuple[Dict[str, tf.Tensor], tf.Tensor]:
  """Turns decoded features into the model's (inputs, label).

  Images become float32 [batch, height, width, channels]; every other feature
  passes through. The label is split off.
  """
  features = dict(features)
  label = features.pop(decl.label.name)
  for f in decl.of_kind("image"):
    features[f.name] = decode_images(features[f.name], f)
  return features, label


def augment(features: Dict[str, tf.Tensor], label: tf.Tensor,
            decl: Declaration, config: TrainingConfig):
  """Random image augmentation, for training batches only."""
  features = dict(features)
  for f in decl.of_kind("image"):
    images = features[f.name]
    if config.flip_left_right:
      images = tf.image.random_flip_left_right(images)
    if config.max_brightness_delta:
      images = tf.image.random_brightness(images, config.max_brightness_delta)
    features[f.name] = images
  return features, label


def make_dataset(file_pattern: List[str], feature_spec: Mapping,
                 decl: Declaration, config: TrainingConfig,
                 training: bool) -> tf.data.Dataset:
  """Batches of (inputs, label) from GZIP TFRecords of transformed Examples.

  Args:
    file_pattern: globs of the record files.
    feature_spec: the transformed feature spec, from TFTransformOutput.
    decl: the dataset declaration.
    config: batch size, shuffle buffer and augmentation.
    training: shuffle, repeat and augment when True; read once, in order,
      when False.

  Returns:
    A dataset of (dict of model inputs, int64 label) batches.
  """
  files = tf.data.Dataset.list_files(file_pattern, shuffle=training)
  records = files.interleave(
      lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP"),
      cycle_length=AUTOTUNE, num_parallel_calls=AUTOTUNE,
      deterministic=not training)
  if training:
    records = records.shuffle(config.shuffle_buffer).repeat()
  batches = records.batch(config.batch_size, drop_remainder=training)
  batches = batches.map(lambda s: parse(decode(s, feature_spec), decl),
                        num_parallel_calls=AUTOTUNE, deterministic=not training)
  if training:
    batches = batches.map(lambda x, y: augment(x, y, decl, config),
                          num_parallel_calls=AUTOTUNE, deterministic=False)
  return batches.prefetch(AUTOTUNE)

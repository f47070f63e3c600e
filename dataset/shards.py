"""Writing `tf.train.Example` records as sharded TFRecord files.

Shards are named `<prefix>-00000-of-000NN.tfrecord[.gz]`. They are written
under temporary names and renamed only once every shard is complete, so an
interrupted write never leaves files that look finished.
"""

import os
from typing import Iterable, List, Mapping, Sequence

import tensorflow as tf

SUFFIX = {"GZIP": ".tfrecord.gz", "NONE": ".tfrecord"}


def to_example(values: Mapping[str, Sequence]) -> tf.train.Example:
  """Builds an Example from name -> list of bytes, ints or floats."""
  feature = {}
  for name, vals in values.items():
    first = vals[0] if len(vals) else 0.0
    if isinstance(first, bytes):
      feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))
    elif isinstance(first, (int, bool)):
      feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=vals))
    else:
      feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=vals))
  return tf.train.Example(features=tf.train.Features(feature=feature))


def shard_paths(out_dir: str, prefix: str, num_shards: int,
                compression: str) -> List[str]:
  return [os.path.join(out_dir, f"{prefix}-{i:05d}-of-{num_shards:05d}"
                       f"{SUFFIX[compression]}") for i in range(num_shards)]


def write_examples(examples: Iterable[Mapping[str, Sequence]], out_dir: str,
                   prefix: str, num_shards: int, compression: str) -> List[str]:
  """Writes examples round-robin into num_shards files.

  Args:
    examples: feature name -> values, one mapping per record.
    out_dir: the folder to write into; created if missing.
    prefix: shard file name prefix.
    num_shards: how many files.
    compression: `GZIP` or `NONE`.

  Returns:
    The shard paths, in order.
  """
  os.makedirs(out_dir, exist_ok=True)
  paths = shard_paths(out_dir, prefix, num_shards, compression)
  options = tf.io.TFRecordOptions(
      compression_type="" if compression == "NONE" else compression)
  writers = [tf.io.TFRecordWriter(p + ".tmp", options) for p in paths]
  try:
    for i, values in enumerate(examples):
      writers[i % num_shards].write(to_example(values).SerializeToString())
  except BaseException:
    for w, p in zip(writers, paths):
      w.close()
      os.remove(p + ".tmp")
    raise
  for w in writers:
    w.close()
  for p in paths:
    os.replace(p + ".tmp", p)
  return paths

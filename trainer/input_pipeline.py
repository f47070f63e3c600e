"""The Trainer's input pipeline, split by stage: read, decode, parse, batch.

One reader owns the order:

    read     shards interleaved in parallel, records in blocks of READ_BLOCK
    shuffle  training only: blocks through a buffer
    decode   one vectorized `parse_example` per parse block (up to 4096
             records: parsing costs 2.5x less per record than at 256)
    parse    Transform graph (when Transform did not materialize), raw
             pixels reinterpreted, label split off
    cache    training only, when the parsed blocks fit `cache_mb`
    shuffle  training only: each block permuted, anew every epoch
    batch    re-batched to the step's batch size
    images   PNG/JPEG decoded to uint8 pixels, batches in parallel
    prefetch

PNG/JPEG bytes are cached as bytes, not as pixels: pixels take ~10x the
memory, and filling memory with them costs the first epoch about as much as
decoding them again (page faults), while bytes let a 10x larger dataset
skip reading, decompressing and parsing after its first epoch.

Augmentation is the fifth stage, and lives in the model (`trainer.augment`),
so that it runs on the accelerator.

Why not the tutorial loop or TFX's `data_accessor.tf_dataset_factory`: one
tf.data element per record costs more than the record itself, and the
factory parses with one thread and ignores its own thread, prefetch and
ordering options (TFX issue #4814). `python -m bench.input_bench` measures
all three against the read ceiling.
"""

import logging
import math
import os
import random
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import tensorflow as tf

from dataset.declaration import Declaration
from dataset.training import TrainingConfig
from trainer import image_decoding as images
from trainer.input_sizing import fits_in_memory, parse_block

log = logging.getLogger(__name__)

AUTOTUNE = tf.data.AUTOTUNE
READ_BLOCK = 64
DECODE_BATCHES_IN_FLIGHT = min(16, 4 * (os.cpu_count() or 1))

Example = Tuple[Dict[str, tf.Tensor], tf.Tensor]


def list_files(patterns: List[str]) -> List[str]:
  """The files matching the globs, sorted (every worker sees the same list).

  Raises:
    FileNotFoundError: a glob that matches nothing, named.
  """
  files = []
  for pattern in patterns:
    matched = tf.io.gfile.glob(pattern)
    if not matched:
      raise FileNotFoundError(f"input pipeline: no files match {pattern!r}")
    files += matched
  return sorted(set(files))


def read(files: List[str], compression: str, training: bool,
         deterministic: bool, shard: Tuple[int, int] = (1, 0)) -> tf.data.Dataset:
  """Reads serialized records in blocks, every shard at once.

  Args:
    files: TFRecord files, sorted.
    compression: GZIP or NONE.
    training: shuffle the file order.
    deterministic: keep a reproducible order across the interleaved files.
    shard: (number of input pipelines, this one's index): files are split
      between pipelines when there are enough of them, records otherwise.

  Returns:
    A dataset of [<= READ_BLOCK] string tensors, serialized Examples.
  """
  count, index = shard
  record_shard = count > 1 and len(files) < count
  if count > 1 and not record_shard:
    files = files[index::count]
  if count > 1 and training:  # what each worker of a job reads, in its log
    log.info("input shard %d of %d: %s", index, count,
             f"records {index}, {index} + {count}, ... of each of {len(files)} file(s)"
             if record_shard else f"{len(files)} file(s): "
             + ", ".join(f.rsplit('/', 2)[-2] + "/" + f.rsplit('/', 1)[-1] for f in files))

  def records(path):
    ds = tf.data.TFRecordDataset(path, compression, buffer_size=1 << 20)
    if record_shard:
      ds = ds.shard(count, index)
    # One element per block, not per record: tf.data's per-element cost
    # exceeds a small record's parse cost.
    return ds.batch(READ_BLOCK)

  names = tf.data.Dataset.from_tensor_slices(files)
  if training:
    names = names.shuffle(len(files), seed=0 if deterministic else None)
  return names.interleave(records, cycle_length=min(len(files), 16),
                          num_parallel_calls=AUTOTUNE,
                          deterministic=deterministic)


def decode(serialized: tf.Tensor, feature_spec: Mapping) -> Dict[str, tf.Tensor]:
  """Parses a [block] of serialized Examples in one vectorized op.

  Returns:
    Each feature of `feature_spec`, keyed by name, with a leading [block]
    dimension (transformed features: see `components.transform.preprocessing`).
  """
  return tf.io.parse_example(serialized, feature_spec)


def parse(features: Dict[str, tf.Tensor], decl: Declaration,
          transform: Optional[Callable] = None) -> Example:
  """Turns decoded features into the model's (inputs, label).

  Args:
    features: decoded [block] features: transformed ones, or raw ones when
      `transform` is given.
    decl: the dataset declaration.
    transform: the Transform graph as a layer, for raw features.

  Returns:
    (inputs, label): inputs keyed by feature name; raw images as
    [block, h, w, c] pixels of their stored dtype; PNG/JPEG images still as
    [block] bytes (decoded per batch by `batch`); the
    label as [block].
  """
  if transform is not None:
    features = transform(features)
  inputs = {name: features[name] for name in decl.input_names()}
  for f in decl.of_kind("image"):
    if f.image.encoding == "raw":
      inputs[f.name] = images.decode_raw(inputs[f.name], f)
  return inputs, features[decl.label.name]


def batch(examples: tf.data.Dataset, decl: Declaration, batch_size: int,
          training: bool, deterministic: bool) -> tf.data.Dataset:
  """The batch stage: blocks re-batched to the step's batch size, and
  PNG/JPEG bytes decoded to pixels there, a whole batch at a time.

  Args:
    examples: (inputs, label) blocks from `parse` (permuted, in training).
    batch_size: examples per batch (per replica).
    training: drop a last, smaller batch (steps need full ones).

  Returns:
    (inputs, label) batches: every feature with a leading [batch_size]
    dimension; PNG/JPEG images as uint8 [batch, h, w, c].
  """
  encoded = [f for f in decl.of_kind("image") if f.image.encoding != "raw"]
  if not encoded:
    return examples.rebatch(batch_size, drop_remainder=training)

  def decode_all(inputs, label):
    inputs = dict(inputs)
    for f in encoded:
      inputs[f.name] = images.decode_batch(inputs[f.name], f)
    return inputs, label

  # Whole batches decoded in parallel, each by the serving signature's own
  # function: measured at 95-99% of the decode ceiling, against 80% for one
  # image per parallel call (whose pixels are then copied into a batch).
  # More batches in flight than cores (AUTOTUNE settles near one per core)
  # so that whole batches arrive steadily: the simulated accelerator's wait
  # fell from 10% to 5%. unbatch/batch rather than rebatch: rebatch's slices
  # share one buffer, which tf.map_fn's unstacking logs an error about.
  return (examples.unbatch().batch(batch_size, drop_remainder=training)
          .map(decode_all, num_parallel_calls=DECODE_BATCHES_IN_FLIGHT,
               deterministic=deterministic))


def permute(index: tf.Tensor, inputs: Dict[str, tf.Tensor], label: tf.Tensor,
            seed: int) -> Example:
  """The block's examples in a random order, features and label together.

  Stateless: the order depends on (seed, index) only, so a parallel map
  gives the same orders whichever thread runs which block.
  """
  keys = tf.random.stateless_uniform(tf.shape(label)[:1],
                                     seed=tf.stack([tf.cast(seed, tf.int64), index]))
  order = tf.argsort(keys)
  return tf.nest.map_structure(lambda t: tf.gather(t, order), (inputs, label))


def make_dataset(file_pattern: List[str], feature_spec: Mapping,
                 decl: Declaration, config: TrainingConfig, training: bool,
                 transform: Optional[Callable] = None,
                 input_context: Optional[tf.distribute.InputContext] = None,
                 compression: str = "GZIP") -> tf.data.Dataset:
  """Batches of (inputs, label) from TFRecords of Examples.

  Args:
    file_pattern: globs of the record files.
    feature_spec: the spec the files are parsed with: the transformed one,
      or the raw one when `transform` is given.
    decl: the dataset declaration.
    config: batch size, shuffle buffer, cache budget and ordering.
    training: shuffle, cache and repeat when True; read once, in order, when
      False.
    transform: the Transform graph as a layer (`transform_features_layer`),
      to apply to raw records.
    input_context: this worker's share under a distribution strategy: its
      shard of the data and its per-replica batch size.
    compression: GZIP or NONE.

  Returns:
    A dataset of (inputs, label) batches of `config.batch_size` per replica:
    inputs as `parse` describes, images decoded to pixels.
  """
  files = list_files(file_pattern)
  deterministic = not training or config.deterministic
  # Shuffles are seeded only for a reproducible order; the block permutation
  # is stateless and always needs one.
  seed = 0 if deterministic else None
  block_seed = 0 if deterministic else random.randrange(1 << 31)
  shard, batch_size = (1, 0), config.batch_size
  if input_context is not None:
    shard = (input_context.num_input_pipelines, input_context.input_pipeline_id)
    batch_size = input_context.get_per_replica_batch_size(
        config.batch_size * input_context.num_replicas_in_sync)
  block = parse_block(decl)

  blocks = read(files, compression, training, deterministic, shard)
  if training:
    blocks = blocks.shuffle(math.ceil(config.shuffle_buffer / READ_BLOCK), seed=seed)
  examples = blocks.rebatch(block).map(
      lambda s: parse(decode(s, feature_spec), decl, transform),
      num_parallel_calls=AUTOTUNE, deterministic=deterministic)
  if training:
    if config.cache_mb and fits_in_memory(
        read(files, compression, False, False), decl, config.cache_mb):
      examples = examples.cache()
    # Block i of the endless stream gets its own order: anew every epoch.
    examples = examples.repeat().enumerate().map(
        lambda i, xy: permute(i, *xy, seed=block_seed),
        num_parallel_calls=AUTOTUNE, deterministic=deterministic)
  return batch(examples, decl, batch_size, training, deterministic).prefetch(AUTOTUNE)

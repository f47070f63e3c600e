"""The input benchmark's pipelines (bench/input_bench.py says what each is),
each a function of the dataset that builds a fresh tf.data pipeline."""

import functools

import tensorflow as tf

from dataset.training import TrainingConfig
from trainer import image_decoding as images
from trainer import input_pipeline

AUTOTUNE = tf.data.AUTOTUNE


def shuffle_buffer(data) -> int:
  """Examples each shuffling pipeline holds: 10000, or 1/16 of a small
  dataset, so that filling it is not a whole pass hidden in the warm-up."""
  return min(10000, data.count // 16)


def _split(features):
  features = dict(features)
  return features, features.pop("label")


def _decode_images(data, features, per_batch):
  for f in data.decl.of_kind("image"):
    if per_batch:
      features[f.name] = images.decode_batch(features[f.name], f)
    elif f.image.encoding == "raw":
      features[f.name] = images.decode_raw(features[f.name][None], f)[0]
    else:
      features[f.name] = images.decode_image(features[f.name], f)
  return features


def ceiling(data):
  names = tf.data.Dataset.from_tensor_slices(data.files)
  return names.interleave(
      lambda f: tf.data.TFRecordDataset(f, data.compression), cycle_length=len(data.files),
      num_parallel_calls=AUTOTUNE, deterministic=False).batch(data.batch_size)


def parse_ceiling(data):
  names = tf.data.Dataset.from_tensor_slices(data.files)
  return names.interleave(
      lambda f: tf.data.TFRecordDataset(f, data.compression).batch(1024),
      cycle_length=len(data.files), num_parallel_calls=AUTOTUNE, deterministic=False,
  ).map(lambda s: tf.io.parse_example(s, data.spec), num_parallel_calls=AUTOTUNE,
        deterministic=False)


def decode_ceiling(data, encoded):
  f = data.decl.of_kind("image")[0]
  return (tf.data.Dataset.from_tensor_slices(encoded)
          .map(lambda v: images.decode_image(v, f), num_parallel_calls=AUTOTUNE,
               deterministic=False).batch(data.batch_size))


def loop(data):
  def parse(serialized):
    return _split(_decode_images(
        data, tf.io.parse_single_example(serialized, data.spec), per_batch=False))
  return (tf.data.TFRecordDataset(data.files, data.compression).map(parse)
          .shuffle(shuffle_buffer(data)).batch(data.batch_size).prefetch(AUTOTUNE))


def factory(data):
  from tfx_bsl.tfxio import dataset_options, tf_example_record

  from dataset.schema import from_declaration
  source = tf_example_record.TFExampleRecord(data.files, schema=from_declaration(data.decl))
  ds = source.TensorFlowDataset(dataset_options.TensorFlowDatasetOptions(
      batch_size=data.batch_size, shuffle=True, shuffle_buffer_size=shuffle_buffer(data),
      num_epochs=1, label_key="label"))

  def decode(features, label):
    features = {k: tf.reshape(v, [-1]) if k in image_names else v
                for k, v in features.items()}
    return _decode_images(data, features, per_batch=True), label
  image_names = {f.name for f in data.decl.of_kind("image")}
  return ds.map(decode, num_parallel_calls=AUTOTUNE) if image_names else ds


def project(data):
  config = TrainingConfig(batch_size=data.batch_size, shuffle_buffer=shuffle_buffer(data))
  ds = input_pipeline.make_dataset(data.files, data.spec, data.decl, config, True,
                                   compression=data.compression)
  return ds.take(data.count // data.batch_size)


def jpeg_bytes(data) -> tf.Tensor:
  """The J dataset's JPEG bytes, in memory, for the decode ceiling."""
  spec = {"image": data.spec["image"]}
  return tf.stack([r["image"] for r in tf.data.TFRecordDataset(data.files, data.compression).map(
      lambda s: tf.io.parse_single_example(s, spec))])


def pipelines_for(data) -> dict:
  """Pipeline name -> a function that builds a fresh dataset of it."""
  pipelines = {"ceiling": functools.partial(ceiling, data)}
  if data.name == "T":
    pipelines["parse_ceiling"] = functools.partial(parse_ceiling, data)
  if data.name == "J":
    pipelines["decode_ceiling"] = functools.partial(decode_ceiling, data, jpeg_bytes(data))
  for make in (loop, factory, project):
    pipelines[make.__name__] = functools.partial(make, data)
  return pipelines

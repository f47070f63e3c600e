"""Runs the real preprocessing_fn with tft_beam, outside a pipeline."""

import functools
import os

import apache_beam as beam
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_metadata.proto.v0 import schema_pb2
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils
from tfx.utils import io_utils

from components.transform import preprocessing


def _instance(row: dict, spec: dict) -> dict:
  out = {}
  for name, feature_spec in spec.items():
    if isinstance(feature_spec, tf.io.FixedLenFeature):
      out[name] = row[name]
    else:  # variable length: a missing feature is an empty list
      out[name] = list(row.get(name, []))
  return out


def analyze_and_transform(decl, rows, folder, parsed: bool = True):
  """`parsed=False` leaves out `outputs`: parsing each record eagerly is a third
  of the time for 1797 digits (tests/training.py), whose users read the files."""
  schema = io_utils.parse_pbtxt_file(decl.schema, schema_pb2.Schema())
  spec = schema_utils.schema_as_feature_spec(schema).feature_spec
  metadata = dataset_metadata.DatasetMetadata(schema)
  fn = functools.partial(preprocessing.preprocessing_fn,
                         custom_config={"declaration": decl.to_dict()})
  transform_dir = os.path.join(folder, "transform")
  files = os.path.join(folder, "transformed", "part")
  with beam.Pipeline() as p, tft_beam.Context(temp_dir=os.path.join(folder, "tmp")):
    raw = p | beam.Create([_instance(r, spec) for r in rows])
    (out_data, out_metadata), transform_fn = (
        (raw, metadata) | tft_beam.AnalyzeAndTransformDataset(
            fn, output_record_batches=False))
    _ = transform_fn | tft_beam.WriteTransformFn(transform_dir)
    # The raw schema, as TFX's Transform keeps it: the serving signature
    # parses raw Examples with it.
    _ = metadata | tft_beam.WriteMetadata(
        os.path.join(transform_dir, tft.TFTransformOutput.RAW_METADATA_DIR), p)
    coder = tft.coders.ExampleProtoCoder(out_metadata.schema)
    _ = (out_data | beam.Map(coder.encode)
         | beam.io.WriteToTFRecord(files, file_name_suffix=".gz",
                                   compression_type=beam.io.filesystem.CompressionTypes.GZIP))
  output = tft.TFTransformOutput(transform_dir)
  dataset = tf.data.TFRecordDataset(tf.io.gfile.glob(files + "*"), "GZIP")
  outputs = [tf.io.parse_single_example(r, output.transformed_feature_spec())
             for r in dataset] if parsed else None
  return {"decl": decl, "rows": rows, "transform_dir": transform_dir,
          "files": [files + "*"], "outputs": outputs}

"""ImportExampleGen, with TFRecords copied or split instead of re-written.

TFX's executor reads every record through Beam, reshuffles the records and
writes them again as GZIP (`example_gen/write_split.py`). For data that is
already split TFRecords of `tf.train.Example`, that is the same records at
a few thousand rows a second (issue 20 measured 2.8k rows/s). When the
output keeps the input's splits (no hash split) and the payload is
tf.Example, this executor copies each split's files, whole, into the
artifact's split folder instead, named as TFX names them
(`data_tfrecord-NNNNN-of-NNNNN`, with `.gz` for GZIP files: TFXIO and the
Trainer's tf.data tell the compression by that suffix,
tfx_bsl/tfxio/dataset_util.py). Span, version and the input fingerprint are
set by TFX's driver, as before, so caching is unchanged.

Only GZIP files are copied: the artifact says `tfrecords_gzip`, and the
Trainer's input pipeline reads ExampleGen's output as GZIP. What changes:
the records keep their files' order (TFX's reshuffle was for the writers'
sake; every consumer shuffles or aggregates), and a record broken in the
middle of a file is found by StatisticsGen, which reads every record,
instead of here. Plain (uncompressed) files, mixed ones, or a split with
no file take TFX's own path, which compresses, or says what is wrong.

Data that ImportExampleGen splits by hash needs every record read; on this
machine's Beam runner (DirectRunner) components/import_examples/hash_split.py does it in one
pass, assigning each record the split TFX would, and writes the records
unchanged (200k rows of T: see bench/e2e_bench.py). With a split by a
feature, or on a distributed runner (Dataflow, Flink, Spark), TFX's Beam
path runs, which those runners spread over many workers.
"""

import os

import tensorflow as tf
from absl import logging
from tfx.components.example_gen import utils
from tfx.components.example_gen.import_example_gen import executor as tfx_executor
from tfx.components.example_gen.import_example_gen.component import (
  ImportExampleGen as TfxImportExampleGen,
)
from tfx.components.example_gen.write_split import DEFAULT_FILE_NAME
from tfx.components.util import examples_utils
from tfx.dsl.components.base import executor_spec
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.import_examples import hash_split
from dataset.records.format import compression_of
from runtime.beam import NoPrism, direct_runner


def split_files(input_base: str, input_config) -> dict:
  """split -> its files, sorted; or None when a split cannot simply be
  copied (no file, or one that is not GZIP)."""
  found = {}
  for split in input_config.splits:
    files = sorted(tf.io.gfile.glob(os.path.join(input_base, split.pattern)))
    if not files or not all(compression_of(f, tf.io.gfile.GFile) == "GZIP" for f in files):
      return None
    found[split.name] = files
  return found


class Executor(NoPrism, tfx_executor.Executor):
  """Copies pre-split tf.Example TFRecords, hash-splits them in one pass on
  this machine; anything else as TFX does."""

  def Do(self, input_dict, output_dict, exec_properties):
    input_config = example_gen_pb2.Input()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.INPUT_CONFIG_KEY],
                              input_config)
    output_config = example_gen_pb2.Output()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.OUTPUT_CONFIG_KEY],
                              output_config)
    payload = exec_properties.get(standard_component_specs.OUTPUT_DATA_FORMAT_KEY)
    file_format = exec_properties.get(standard_component_specs.OUTPUT_FILE_FORMAT_KEY)
    input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
    examples = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.EXAMPLES_KEY])
    plain = (payload == example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE
             and file_format in (None, example_gen_pb2.FILE_FORMAT_UNSPECIFIED,
                                 example_gen_pb2.FORMAT_TFRECORDS_GZIP))
    splits = output_config.split_config
    if plain and not splits.splits:
      done = self._copy(examples, input_base, input_config, output_config)
    elif (plain and not splits.HasField("partition_feature_name")
          and len(input_config.splits) == 1 and direct_runner(self._beam_pipeline_args)):
      # On Dataflow, Flink or Spark, Beam's own path spreads the work.
      done = self._split(examples, input_base, input_config, output_config)
    else:
      done = False
    if not done:
      super().Do(input_dict, output_dict, exec_properties)
      return
    # What TFX's executor records on the artifact besides the files.
    examples_utils.set_payload_format(examples, payload)
    examples_utils.set_file_format(examples, "tfrecords_gzip")

  def _copy(self, examples, input_base: str, input_config, output_config) -> bool:
    files = split_files(input_base, input_config)
    if files is None:
      return False
    examples.split_names = artifact_utils.encode_split_names(
        utils.generate_output_split_names(input_config, output_config))
    for split, paths in files.items():
      folder = artifact_utils.get_split_uri([examples], split)
      tf.io.gfile.makedirs(folder)
      for i, path in enumerate(paths):
        name = f"{DEFAULT_FILE_NAME}-{i:05d}-of-{len(paths):05d}.gz"
        tf.io.gfile.copy(path, os.path.join(folder, name), overwrite=True)
      logging.info("Copied %d file(s) of split %s into %s.", len(paths), split, folder)
    return True

  def _split(self, examples, input_base: str, input_config, output_config) -> bool:
    files = sorted(tf.io.gfile.glob(os.path.join(input_base, input_config.splits[0].pattern)))
    if not files:
      return False  # TFX's path says what is missing
    names = utils.generate_output_split_names(input_config, output_config)
    examples.split_names = artifact_utils.encode_split_names(names)
    buckets = {s.name: s.hash_buckets for s in output_config.split_config.splits}
    counts = hash_split.hash_split(
        files, {n: artifact_utils.get_split_uri([examples], n) for n in names},
        buckets, DEFAULT_FILE_NAME)
    logging.info("Hash-split %d file(s): %s records.", len(files), counts)
    return True


class ImportExampleGen(TfxImportExampleGen):
  """TFX's ImportExampleGen, running the executor above."""
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

"""ImportExampleGen's executor (components/import_examples/import_examples.py), run for real:
pre-split GZIP TFRecords are copied whole; a hash split is done in one pass
and puts every record in the split TFX's own executor puts it in; plain
pre-split files go through TFX's Beam path; every record arrives."""

import json
import os

import tensorflow as tf
from google.protobuf import json_format
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_artifacts

from components.import_examples import hash_split
from components.import_examples.import_examples import Executor
from dataset.convert.rows import write_rows
from tests.conftest import digit_rows


def run_executor(tmp_path, data_root: str, splits: dict, hash_buckets=None,
                 executor=Executor):
  examples = standard_artifacts.Examples()
  examples.uri = str(tmp_path / "examples")
  input_config = example_gen_pb2.Input(splits=[
      example_gen_pb2.Input.Split(name=n, pattern=p) for n, p in splits.items()])
  output_config = example_gen_pb2.Output()
  if hash_buckets:
    output_config.split_config.splits.extend([
        example_gen_pb2.SplitConfig.Split(name=n, hash_buckets=b)
        for n, b in hash_buckets.items()])
  executor().Do({}, {"examples": [examples]}, {
      "input_base": data_root,
      "input_config": json_format.MessageToJson(input_config),
      "output_config": json_format.MessageToJson(output_config),
      "output_data_format": example_gen_pb2.FORMAT_TF_EXAMPLE,
      "output_file_format": example_gen_pb2.FORMAT_TFRECORDS_GZIP})
  return examples


def records(files) -> list:
  return sorted(r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP"))


def split_files(examples, split: str) -> list:
  folder = artifact_utils.get_split_uri([examples], split)
  return sorted(os.path.join(folder, f) for f in os.listdir(folder))


def test_pre_split_gzip_files_are_copied_whole(tmp_path):
  root = str(tmp_path / "data")
  write_rows(digit_rows(120), root, prefix="digits", eval_percent=25,
             keys=[f"k{i}" for i in range(120)], shard_mb=0.01)
  examples = run_executor(tmp_path, root, {"train": "train/*.gz", "eval": "eval/*.gz"})
  assert json.loads(examples.split_names) == ["train", "eval"]
  for split in ("train", "eval"):
    given = sorted(tf.io.gfile.glob(os.path.join(root, split, "*.gz")))
    assert len(given) > (split == "train"), given  # several train shards
    copied = split_files(examples, split)
    assert [os.path.basename(f) for f in copied] == [
        f"data_tfrecord-{i:05d}-of-{len(given):05d}.gz" for i in range(len(given))]
    for a, b in zip(given, copied):
      with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read(), f"{b} is not a byte copy of {a}"
  assert examples.get_string_custom_property("file_format") == "tfrecords_gzip"


def test_hash_split_names_the_file_and_record_that_is_not_an_example(tmp_path):
  root = tmp_path / "data"
  write_rows(digit_rows(20), str(root), prefix="digits", keys=[f"k{i}" for i in range(20)])
  with tf.io.TFRecordWriter(str(root / "zz-bad.tfrecord")) as w:
    w.write(b"\xff\xff\xff")  # framed as a record, but no Example
  try:
    run_executor(tmp_path, str(root), {"all": "*"}, {"train": 1, "eval": 1})
  except hash_split.NotAnExample as e:
    assert "zz-bad.tfrecord: record 0: expected a serialized tf.train.Example" in str(e)
  else:
    raise AssertionError("a record that is not a tf.train.Example was split without error")

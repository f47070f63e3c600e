"""ImportExampleGen's executor (components/import_examples.py), run for real:
pre-split GZIP TFRecords are copied whole; plain files and hash splits go
through TFX's own Beam path; either way every record arrives."""

import json
import os

import tensorflow as tf
from google.protobuf import json_format
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_artifacts

from components.import_examples import Executor
from convert.rows import write_rows
from tests.conftest import digit_rows


def run_executor(tmp_path, data_root: str, splits: dict, hash_buckets=None):
  examples = standard_artifacts.Examples()
  examples.uri = str(tmp_path / "examples")
  input_config = example_gen_pb2.Input(splits=[
      example_gen_pb2.Input.Split(name=n, pattern=p) for n, p in splits.items()])
  output_config = example_gen_pb2.Output()
  if hash_buckets:
    output_config.split_config.splits.extend([
        example_gen_pb2.SplitConfig.Split(name=n, hash_buckets=b)
        for n, b in hash_buckets.items()])
  Executor().Do({}, {"examples": [examples]}, {
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


def test_plain_files_and_hash_splits_take_tfxs_path_and_every_record_arrives(tmp_path):
  root = str(tmp_path / "plain")
  write_rows(digit_rows(60), root, prefix="digits", compression="NONE",
             keys=[f"k{i}" for i in range(60)])
  given = sorted(r.numpy() for r in tf.data.TFRecordDataset(
      tf.io.gfile.glob(f"{root}/*.tfrecord")))
  examples = run_executor(tmp_path / "a", root, {"train": "*.tfrecord"})
  assert records(split_files(examples, "train")) == given  # written again, as GZIP
  examples = run_executor(tmp_path / "b", root, {"all": "*.tfrecord"},
                          hash_buckets={"train": 3, "eval": 1})
  split = {s: records(split_files(examples, s)) for s in ("train", "eval")}
  assert sorted(split["train"] + split["eval"]) == given

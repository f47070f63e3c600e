"""ImportExamples against TFX's own ImportExampleGen executor on Beam: plain
pre-split files take TFX's path, and a hash split puts each record where
TFX's executor puts it."""

import json
import os

import tensorflow as tf
from tfx.components.example_gen.import_example_gen import executor as tfx_executor

from dataset.convert.rows import write_rows
from tests.conftest import digit_rows
from tests.unit.components.import_examples.test_import_examples import (
  records,
  run_executor,
  split_files,
)


def test_plain_pre_split_files_take_tfxs_path_and_every_record_arrives(tmp_path):
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


def test_hash_split_puts_each_record_where_tfxs_executor_puts_it(tmp_path):
  root = str(tmp_path / "data")
  # Plain and GZIP files together, several of each: the split reads both.
  write_rows(digit_rows(300), f"{root}/a", prefix="digits", compression="NONE",
             keys=[f"k{i}" for i in range(300)], shard_mb=0.01)
  write_rows(digit_rows(200), f"{root}/b", prefix="more",
             keys=[f"m{i}" for i in range(200)], shard_mb=0.01)
  given = [r.numpy() for r in tf.data.TFRecordDataset(tf.io.gfile.glob(f"{root}/a/*"))]
  given += [r.numpy() for r in tf.data.TFRecordDataset(tf.io.gfile.glob(f"{root}/b/*"),
                                                        "GZIP")]
  buckets = {"train": 3, "eval": 1, "test": 1}
  ours = run_executor(tmp_path / "ours", root, {"all": "*/*"}, buckets)
  theirs = run_executor(tmp_path / "tfx", root, {"all": "*/*"}, buckets,
                        executor=tfx_executor.Executor)
  assert json.loads(ours.split_names) == json.loads(theirs.split_names) == list(buckets)
  total = 0
  for split in buckets:
    mine = records(split_files(ours, split))
    tfx_keys = sorted(tf.train.Example.FromString(r).SerializeToString(deterministic=True)
                      for r in records(split_files(theirs, split)))
    my_keys = sorted(tf.train.Example.FromString(r).SerializeToString(deterministic=True)
                     for r in mine)
    assert my_keys == tfx_keys, (
        f"split {split}: {len(my_keys)} records here, {len(tfx_keys)} from TFX's "
        f"executor, {len(set(my_keys) ^ set(tfx_keys))} placed differently")
    assert set(mine) <= set(given), f"split {split}: records re-encoded, not copied"
    total += len(mine)
  assert total == len(given) and len(records(split_files(ours, "test"))) > 0
  files = [os.path.basename(f) for f in split_files(ours, "eval")]
  n = len(tf.io.gfile.glob(f"{root}/*/*"))
  assert files == [f"data_tfrecord-{i:05d}-of-{n:05d}.gz" for i in range(n)], files
  assert ours.get_string_custom_property("file_format") == "tfrecords_gzip"

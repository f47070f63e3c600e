"""Retraining on new spans, end to end: one pipeline home, four runs.

Span 1 is blessed and pushed; span 2 warm-starts from it and is pushed;
span 3 (labels shuffled) is not blessed and the second version keeps
serving; a rerun with no new span comes entirely from the cache and exits
0. Each step is checked in ML Metadata and in the serving directory.
"""

import copy
import glob
import os

import numpy as np
import pytest
import tensorflow as tf

from convert import digits
from convert.rows import write_rows
from debug import outcome
from debug import store as st
from tests.conftest import DIGITS_SCHEMA, digits_raw, write_declaration
from tests.test_e2e import ALL_NODES, run_local

pytestmark = pytest.mark.e2e

ARGS = ("--train-steps", "300", "--threshold", "0.8")


def write_span(root: str, span: int, start: int, stop: int, shuffle: bool = False):
  """Digits start..stop as span-<span>/{train,eval}, as `convert --span` lays them out."""
  images, labels = digits.load_images()
  labels = labels[start:stop].copy()
  if shuffle:
    np.random.RandomState(span).shuffle(labels)
  rows = [digits.digit_features(images[start + i], labels[i]) for i in range(len(labels))]
  write_rows(rows, os.path.join(root, f"span-{span}"), prefix="digits",
             eval_percent=digits.EVAL_PERCENT,
             keys=[f"digits-{i}" for i in range(start, stop)])


def versions(serving: str) -> list:
  return sorted((v for v in os.listdir(serving) if v.isdigit()), key=int)


def serve_accuracy(model_dir: str, files: list) -> float:
  serve = tf.saved_model.load(model_dir).signatures["serving_default"]
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  return float((probs.argmax(axis=1) == labels).mean())


def test_three_spans_then_a_rerun_with_nothing_new(tmp_path):
  data, out = str(tmp_path / "data"), str(tmp_path / "out")
  raw = copy.deepcopy(digits_raw())
  raw["name"] = "retrain"
  raw["schema"] = DIGITS_SCHEMA
  raw["data"] = {"root": data, "window": 2,
                 "splits": {"train": "span-{SPAN}/train/*.tfrecord.gz",
                            "eval": "span-{SPAN}/eval/*.tfrecord.gz"}}
  args = ["--dataset", write_declaration(tmp_path, raw), "--output-dir", out, *ARGS]
  home = os.path.join(out, "retrain")
  metadata, serving = os.path.join(home, "metadata.sqlite"), os.path.join(home, "serving")
  cache = os.path.join(home, "pipeline_root", "analyzer_cache", "retrain")

  # 1. Span 1: nothing served yet; blessed and pushed as the first version.
  write_span(data, 1, 0, 900)
  code, stdout, err = run_local(*args)
  assert code == 0, err[-3000:]
  first = outcome.read_outcome(metadata, "retrain")
  assert first.blessed and versions(serving) == [os.path.basename(first.pushed_dir)]
  assert "warm start: none, no model is served yet" in stdout
  assert os.listdir(cache) == ["train_span1"]
  span1_cache = {p: os.stat(p).st_mtime_ns
                 for p in glob.glob(os.path.join(cache, "train_span1", "*"))}

  # 2. Span 2: the window is spans 1-2; warm-started from the first version,
  # blessed against it and pushed as the second.
  write_span(data, 2, 900, 1797)
  code, stdout, err = run_local(*args)
  assert code == 0, err[-3000:]
  second = outcome.read_outcome(metadata, "retrain")
  assert f"warm start: from {first.pushed_dir}" in stdout
  assert second.blessed and second.states["Trainer"] == "COMPLETE"
  assert versions(serving) == [os.path.basename(first.pushed_dir),
                               os.path.basename(second.pushed_dir)]
  # The Trainer's base model, in ML Metadata, is the first version.
  store = st.open_store(metadata)
  trainer = st.latest_execution(store, "retrain", "Trainer")
  (base,) = [a for key, a in st.events(store, trainer.id, st.INPUTS) if key == "base_model"]
  assert base.custom_properties["source_model"].string_value == first.pushed_dir
  # Span 1 came from Transform's analyzer cache: its entry was not rewritten.
  assert sorted(os.listdir(cache)) == ["train_span1", "train_span2"]
  assert {p: os.stat(p).st_mtime_ns for p in span1_cache} == span1_cache

  # 3. Span 3, labels shuffled: trained, not blessed, not pushed; the second
  # version still serves.
  write_span(data, 3, 0, 900, shuffle=True)
  code, stdout, err = run_local(*args)
  assert code == 1, err[-3000:]
  third = outcome.read_outcome(metadata, "retrain")
  assert third.states["Trainer"] == "COMPLETE" and third.blessed is False
  assert third.pushed_dir is None and "model NOT blessed" in stdout
  assert "no model pushed" in stdout
  assert versions(serving)[-1] == os.path.basename(second.pushed_dir)
  assert len(versions(serving)) == 2
  span2_eval = glob.glob(os.path.join(data, "span-2", "eval", "*.tfrecord.gz"))
  accuracy = serve_accuracy(os.path.join(serving, versions(serving)[-1]), span2_eval)
  assert accuracy >= 0.8, f"the served second version: accuracy {accuracy} on span 2"

  # 4. No new span: every component from the cache, nothing pushed, exit 0.
  code, stdout, err = run_local(*args)
  assert code == 0, err[-3000:]
  rerun = outcome.read_outcome(metadata, "retrain")
  assert rerun.states == {n: "CACHED" for n in ALL_NODES}
  assert "no new data: spans 2, 3 already went through this pipeline" in stdout
  assert len(versions(serving)) == 2

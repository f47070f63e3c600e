"""End to end on the bundled digits: the real pipeline, with LocalDagRunner.

Runs `local_runner.py` as a user does, then checks ML Metadata, the pushed
SavedModel (loaded the way TF Serving loads it), and caching on re-runs.
"""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from debug import store as st
from pipeline import outcome
from tests.conftest import REPO

pytestmark = pytest.mark.e2e

TRAINING_NODES = ["ImportExampleGen", "CuratedSchema", "StatisticsGen",
                  "ExampleValidator", "AnomaliesGate", "Transform", "Trainer"]
ALL_NODES = TRAINING_NODES + ["BaselineModel", "Evaluator", "Pusher"]


def run_local(*args):
  """Runs local_runner.py in a fresh process; returns (exit code, stdout, stderr).

  The environment is the user's: without the Keras choice that importing
  `components` made in this test process.
  """
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  proc = subprocess.run([sys.executable, os.path.join(REPO, "local_runner.py"), *args],
                        capture_output=True, text=True, timeout=1200, env=env)
  return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
  root = tmp_path_factory.mktemp("e2e")
  args = ["--output-dir", str(root / "out"), "--data-root", str(root / "data")]
  code, out, err = run_local(*args)
  assert code == 0, err[-3000:]
  return {"args": args, "root": root, "stdout": out,
          "metadata": str(root / "out" / "digits" / "metadata.sqlite"),
          "serving": str(root / "out" / "digits" / "serving")}


def _executions_per_node(metadata_path):
  store = st.open_store(metadata_path)
  return {ctx.name.split(".", 1)[1]: store.get_executions_by_context(ctx.id)
          for ctx in store.get_contexts_by_type("node")}


def test_every_component_ran_once_and_the_model_was_blessed_and_pushed(digits_run):
  per_node = _executions_per_node(digits_run["metadata"])
  assert sorted(per_node) == sorted(ALL_NODES)
  for node, executions in per_node.items():
    assert len(executions) == 1, node
    assert executions[0].last_known_state == st.STATE.COMPLETE, node
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert result.blessed is True
  assert result.accuracy >= 0.9
  last_line = digits_run["stdout"].strip().splitlines()[-1]
  assert last_line == f"pushed model: {result.pushed_dir}"
  assert os.path.dirname(result.pushed_dir) == digits_run["serving"]
  assert os.path.isfile(os.path.join(result.pushed_dir, "saved_model.pb"))


def test_pushed_model_serves_serialized_eval_examples_accurately(digits_run):
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  serve = tf.saved_model.load(result.pushed_dir).signatures["serving_default"]
  files = glob.glob(str(digits_run["root"] / "data" / "eval" / "*.tfrecord.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  assert probs.shape == (len(records), 10)
  accuracy = float((probs.argmax(axis=1) == labels).mean())
  assert len(records) > 300
  assert accuracy >= 0.95


def test_rerun_on_unchanged_inputs_is_served_from_cache(digits_run):
  first = outcome.read_outcome(digits_run["metadata"], "digits")
  code, out, err = run_local(*digits_run["args"])
  assert code == 0, err[-3000:]
  second = outcome.read_outcome(digits_run["metadata"], "digits")
  assert {n: second.states[n] for n in TRAINING_NODES} == {
      n: "CACHED" for n in TRAINING_NODES}
  # BaselineModel runs again once, because the model now served is a new
  # baseline; the Evaluator re-judges the unchanged model against it (it
  # passes the change threshold), and the Pusher finds it already in the
  # serving dir instead of copying it again.
  assert {second.states[n] for n in ("BaselineModel", "Evaluator", "Pusher")} == {"COMPLETE"}
  assert second.blessed is True
  assert second.pushed_dir == first.pushed_dir
  assert os.listdir(digits_run["serving"]) == [os.path.basename(first.pushed_dir)]
  assert out.strip().endswith(f"pushed model: {first.pushed_dir}")

  code, out, err = run_local(*digits_run["args"])
  assert code == 0, err[-3000:]
  third = outcome.read_outcome(digits_run["metadata"], "digits")
  assert third.states == {n: "CACHED" for n in ALL_NODES}
  assert third.pushed_dir == first.pushed_dir


def test_model_below_the_threshold_is_not_blessed_and_not_pushed(digits_run):
  before = sorted(os.listdir(digits_run["serving"]))
  # Eight steps leave the model far from perfect, so it cannot clear 0.9999
  # (a well-trained one can: 323 of 323 eval digits happens).
  code, out, err = run_local(*digits_run["args"], "--min-accuracy", "0.9999",
                             "--train-steps", "8")
  assert code == 1, err[-3000:]
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert result.states["Evaluator"] == "COMPLETE" and result.states["Pusher"] == "COMPLETE"
  assert result.accuracy < 0.9999
  assert result.blessed is False and result.pushed_dir is None
  assert "model NOT blessed: eval accuracy" in out
  assert any("sparse_categorical_accuracy value" in r and "0.9999" in r
             for r in result.reasons), result.reasons
  assert out.strip().endswith("no model pushed")
  assert sorted(os.listdir(digits_run["serving"])) == before


def test_convert_then_run_needs_no_hand_editing(tmp_path):
  """Raw-pixel digits from NumPy, converted to plain (uncompressed) TFRecords,
  then the pipeline on them as is."""
  from cli.main import main as tfrecords
  from dataset.digits import load_images
  images, labels = load_images()
  images = images[..., None]
  np.savez(tmp_path / "digits.npz", images=images, labels=labels,
           ink=(images > 0).mean(axis=(1, 2, 3)).astype(np.float32))
  assert tfrecords(["convert", "arrays", str(tmp_path / "digits.npz"), "--output",
                    str(tmp_path / "raw_digits"), "--eval-percent", "20",
                    "--compression", "NONE"]) == 0
  code, out, err = run_local("--dataset", str(tmp_path / "raw_digits" / "dataset.yaml"),
                             "--output-dir", str(tmp_path / "runs"), "--train-steps", "400")
  assert code == 0, err[-3000:]
  result = outcome.read_outcome(str(tmp_path / "runs" / "raw_digits" / "metadata.sqlite"),
                                "raw_digits")
  assert result.blessed and result.accuracy >= 0.9
  assert out.strip().endswith(f"pushed model: {result.pushed_dir}")


def test_partial_run_reruns_only_the_chosen_nodes(digits_run):
  code, out, err = run_local(*digits_run["args"], "--from-node", "Trainer",
                             "--to-node", "Trainer", "--no-cache")
  assert code == 0, err[-3000:]
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  # The nodes before Trainer are not run: TFX records their earlier outputs
  # as reused (CACHED); the nodes after it are left out.
  assert result.states["Trainer"] == "COMPLETE"
  assert {n for n, s in result.states.items() if s != "CACHED"} == {"Trainer"}
  assert "Evaluator" not in result.states and "Pusher" not in result.states
  code, _, err = run_local(*digits_run["args"], "--to-node", "Pushr")
  assert code == 2
  (line,) = [x for x in err.splitlines() if x.startswith("error: --to-node: expected one of ")]
  listed = line.split("expected one of ", 1)[1].split(", found")[0].split(", ")
  assert sorted(listed) == sorted(ALL_NODES), line
  assert line.endswith("found 'Pushr'"), line

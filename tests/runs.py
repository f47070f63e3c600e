"""Helpers for the tests that run the real pipeline: run a command as a user
does, and read what a run left (ML Metadata, a served model)."""

import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from serving import rest
from store.metadata import store as st
from tests.conftest import REPO

TRAINING_NODES = ["ImportExampleGen", "ImageCheck", "CuratedSchema", "StatisticsGen",
                  "ExampleValidator", "AnomaliesGate", "Transform", "Trainer"]
ALL_NODES = TRAINING_NODES + ["BaselineModel", "Evaluator", "ServingCheck", "Pusher"]


def start_local(*args) -> subprocess.Popen:
  """Starts local_runner.py in a fresh process, its output piped.

  The environment is the user's: without the Keras choice that importing
  `components` made in this test process.
  """
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  return subprocess.Popen([sys.executable, os.path.join(REPO, "local_runner.py"), *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def run_local(*args):
  """Runs local_runner.py in a fresh process; returns (exit code, stdout, stderr)."""
  proc = start_local(*args)
  out, err = proc.communicate(timeout=1200)
  return proc.returncode, out, err


def debug_cli(*args):
  """Runs `python -m commands.debug` in a fresh process; returns (exit code, stdout, stderr)."""
  return module_cli("commands.debug", *args)


def module_cli(module: str, *args):
  """Runs `python -m <module>` in a fresh process; returns (exit code, stdout, stderr)."""
  proc = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO,
                        capture_output=True, text=True, timeout=600)
  return proc.returncode, proc.stdout, proc.stderr


def executions_per_node(metadata_path):
  """node -> its executions, from a pipeline's ML Metadata store."""
  store = st.open_store(metadata_path)
  return {ctx.name.split(".", 1)[1]: store.get_executions_by_context(ctx.id)
          for ctx in store.get_contexts_by_type("node")}


def real_executions(metadata_path):
  """node -> ids of the executions that really ran (not cache reuses)."""
  return {node: {e.id for e in executions if e.last_known_state != st.STATE.CACHED}
          for node, executions in executions_per_node(metadata_path).items()}


def json_answers(model_dir: str, records: list, decl) -> dict:
  """A SavedModel's serving_default on records sent as a JSON client sends
  them, read by TF Serving's rules (serving/rest.py)."""
  specs = rest.inputs(decl)
  request = rest.decode(rest.request_body(records, specs), specs)
  serve = tf.saved_model.load(model_dir).signatures["serving_default"]
  return {k: v.numpy() for k, v in serve(**{k: tf.constant(v)
                                            for k, v in request.items()}).items()}


def serve_accuracy(model_dir: str, files: list) -> tuple:
  """(accuracy, records) of a SavedModel's serving_examples on serialized
  examples, called as TF Serving calls it."""
  serve = tf.saved_model.load(model_dir).signatures["serving_examples"]
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  assert probs.shape == (len(records), 10), probs.shape
  return float((probs.argmax(axis=1) == labels).mean()), len(records)

"""The compiled Kubeflow pipeline's steps really run: ImportExampleGen to Pusher.

Each step runs the exact command of the compiled spec through TFX's KFP v2
container entrypoint, in a fresh process, with its executor input filled as
Kubeflow's launcher fills it (tests/kfp_launcher.py, a stand-in for the
cluster, since none can run here). Then the outputs are checked as a user
would: TFDV loads the statistics, the SavedModel serves the eval digits.
"""

import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv
import yaml

from dataset.digits import write_digits
from kubeflow.cli import main as kubeflow
from tests.kfp_launcher import run_pipeline_spec

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
  root = tmp_path_factory.mktemp("kfp_run")
  write_digits(str(root / "data"))
  assert kubeflow(["compile", "--image", "local/tfrecord-pipeline:test",
                   "--pipeline-root", str(root / "pipeline_root"),
                   "--data-root", "gs://not-used/the/run/overrides/it",
                   "--skip-data-check", "--output-dir", str(root / "compiled")]) == 0
  with open(root / "compiled" / "pipeline.yaml") as f:
    spec = yaml.safe_load(f)
  serving = str(root / "serving")
  (root / "logs").mkdir()
  outputs = run_pipeline_spec(
      spec, str(root / "pipeline_root"),
      params={"data_root": str(root / "data"),
              "train_args": json.dumps({"num_steps": 400}),
              "push_destination": json.dumps({"filesystem": {"base_directory": serving}})},
      log_dir=str(root / "logs"))
  return {"root": root, "outputs": outputs, "serving": serving}


def test_statistics_load_in_tfdv_for_both_splits(ran):
  uri = ran["outputs"][("StatisticsGen", "statistics")]["uri"]
  for split in ("train", "eval"):
    stats = tfdv.load_stats_binary(os.path.join(uri, f"Split-{split}",
                                                "FeatureStats.pb"))
    names = {f.path.step[0] for f in stats.datasets[0].features}
    assert {"image", "ink", "label", "row_ink"} <= names


def test_schema_and_transform_graph_were_written(ran):
  schema_uri = ran["outputs"][("CuratedSchema", "schema")]["uri"]
  assert 'name: "ink"' in open(os.path.join(schema_uri, "schema.pbtxt")).read()
  graph = ran["outputs"][("Transform", "transform_graph")]["uri"]
  assert os.path.isfile(os.path.join(graph, "transform_fn", "saved_model.pb"))


def test_model_is_blessed_and_pushed_and_serves_the_eval_digits(ran):
  blessing = ran["outputs"][("Evaluator", "blessing")]
  assert os.path.isfile(os.path.join(blessing["uri"], "BLESSED"))
  versions = os.listdir(ran["serving"])
  assert len(versions) == 1
  pushed = os.path.join(ran["serving"], versions[0])
  serve = tf.saved_model.load(pushed).signatures["serving_default"]
  files = glob.glob(str(ran["root"] / "data" / "eval" / "*.tfrecord.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  accuracy = float((probs.argmax(axis=1) == labels).mean())
  assert accuracy >= 0.95, f"expected >= 0.95 eval accuracy, found {accuracy:.4f}"


def test_first_baseline_is_empty_and_the_runtime_train_steps_were_used(ran):
  baseline = ran["outputs"][("BaselineModel", "model")]["uri"]
  assert not os.path.exists(os.path.join(baseline, "Format-Serving"))
  log = open(ran["root"] / "logs" / "Trainer.log").read()
  # 400 steps in 8 epochs, as the run-time parameter asked
  assert "epoch 8 (step 400): " in log, log[-3000:]

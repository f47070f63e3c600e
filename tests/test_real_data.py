"""Real tabular data as it comes: Chicago taxi trips (shipped inside the tfx
package), with values missing in a good share of records, through convert
and a full LocalDagRunner run to a pushed model that serves records lacking
the optional features."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf
import tfx

from dataset import declaration
from pipeline import outcome
from tests.test_e2e import run_local

pytestmark = pytest.mark.e2e

TAXI_CSV = os.path.join(os.path.dirname(tfx.__file__), "examples", "chicago_taxi_pipeline",
                        "data", "big_tipper_label", "data.csv")
MIN_ACCURACY = 0.7  # the majority class alone is 0.775; the run blesses at 0.7


@pytest.fixture(scope="module")
def taxi_run(tmp_path_factory):
  from cli.main import main as tfrecords
  root = tmp_path_factory.mktemp("taxi")
  assert tfrecords(["convert", "table", TAXI_CSV, "--label", "big_tipper", "--output",
                    str(root / "taxi"), "--eval-percent", "20"]) == 0
  code, out, err = run_local("--dataset", str(root / "taxi" / "dataset.yaml"),
                             "--output-dir", str(root / "runs"),
                             "--min-accuracy", str(MIN_ACCURACY), "--train-steps", "300")
  assert code == 0, err[-3000:]
  return {"root": root, "stdout": out,
          "decl": declaration.load(str(root / "taxi" / "dataset.yaml")),
          "metadata": str(root / "runs" / "taxi" / "metadata.sqlite")}


def test_convert_declares_the_columns_with_gaps_optional(taxi_run):
  optional = {f.name for f in taxi_run["decl"].features if not f.required}
  # company is missing in about a third of the trips, the dropoff tract in
  # over a quarter, a few coordinates in 3%.
  assert {"company", "dropoff_census_tract", "dropoff_latitude"} <= optional
  assert {"fare", "payment_type", "trip_start_hour"}.isdisjoint(optional)


def test_the_run_blesses_and_pushes_a_model_despite_the_gaps(taxi_run):
  result = outcome.read_outcome(taxi_run["metadata"], "taxi")
  assert result.blessed is True and result.accuracy >= MIN_ACCURACY, result
  assert taxi_run["stdout"].strip().endswith(f"pushed model: {result.pushed_dir}")
  # No anomaly stopped it: the gaps are allowed by the inferred schema.
  assert result.states["AnomaliesGate"] == "COMPLETE"


def test_the_pushed_model_serves_records_that_lack_optional_features(taxi_run):
  result = outcome.read_outcome(taxi_run["metadata"], "taxi")
  serve = tf.saved_model.load(result.pushed_dir).signatures["serving_default"]
  files = glob.glob(str(taxi_run["root"] / "taxi" / "eval" / "*.gz"))
  examples = [tf.train.Example.FromString(r.numpy())
              for r in tf.data.TFRecordDataset(files, "GZIP")]

  def present(example, name):
    feature = example.features.feature.get(name)
    return feature is not None and feature.WhichOneof("kind") is not None

  lacking = [e for e in examples if not present(e, "company")]
  assert len(lacking) > 500, len(lacking)
  labels = np.array([e.features.feature["big_tipper"].int64_list.value[0] for e in lacking])
  probs = serve(examples=tf.constant([e.SerializeToString() for e in lacking]))[
      "probabilities"].numpy()
  accuracy = float((probs.argmax(axis=1) == labels).mean())
  assert accuracy >= MIN_ACCURACY, f"expected >= {MIN_ACCURACY} without company, found {accuracy}"

  # Every optional feature gone at once, and no label: still an answer.
  bare = tf.train.Example()
  bare.CopyFrom(lacking[0])
  for f in taxi_run["decl"].features:
    if not f.required:
      del bare.features.feature[f.name]
  del bare.features.feature["big_tipper"]
  answer = serve(examples=tf.constant([bare.SerializeToString()]))["probabilities"].numpy()
  assert answer.shape == (1, 2) and abs(answer.sum() - 1) < 1e-5, answer

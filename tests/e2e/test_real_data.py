"""Real data as it comes.

Chicago taxi trips (shipped inside the tfx package), with values missing in a
good share of records, headers as people write them (spaces, a slash,
parentheses, a hyphen), and the tip to predict: a regression label. Through
convert and a full LocalDagRunner run to a pushed model that serves records
lacking the optional features. Then a folder of digit photos, PNG and JPEG
mixed, through convert and a full run."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf
import tfx

from dataset import declaration
from store.metadata import outcome
from tests.runs import json_answers, run_local

pytestmark = [pytest.mark.e2e, pytest.mark.long]

TAXI_CSV = os.path.join(os.path.dirname(tfx.__file__), "examples", "chicago_taxi_pipeline",
                        "data", "big_tipper_label", "data.csv")


# Headers as people write them: a space, a slash, parentheses, a hyphen.
# Convert renames each to the name a serving signature keeps.
HEADERS = {"fare": "fare ($)", "payment_type": "payment-type",
           "trip_start_hour": "trip start hour", "dropoff_census_tract": "dropoff census/tract",
           "pickup_community_area": "pickup (community area)"}


@pytest.fixture(scope="module")
def taxi_run(tmp_path_factory):
  from commands.tfrecords.main import main as tfrecords
  root = tmp_path_factory.mktemp("taxi")
  with open(TAXI_CSV) as f:
    header, rest = f.read().split("\n", 1)
  (root / "trips.csv").write_text(",".join(HEADERS.get(c, c) for c in header.split(","))
                                  + "\n" + rest)
  assert tfrecords(["convert", "table", str(root / "trips.csv"), "--label", "tips",
                    "--output", str(root / "taxi"), "--eval-percent", "20"]) == 0
  # The threshold convert declares: the tips' own spread, which a model that
  # always predicts the mean would reach.
  code, out, err = run_local("--dataset", str(root / "taxi" / "dataset.yaml"),
                             "--output-dir", str(root / "runs"), "--train-steps", "300")
  assert code == 0, err[-3000:]
  return {"root": root, "stdout": out,
          "decl": declaration.load(str(root / "taxi" / "dataset.yaml")),
          "metadata": str(root / "runs" / "taxi" / "metadata.sqlite")}


def test_convert_declares_gaps_optional_and_a_float_label_regression(taxi_run):
  decl = taxi_run["decl"]
  assert decl.label.kind == "regression" and decl.evaluation.metric == "rmse"
  assert 1 < decl.evaluation.threshold < 5, decl.evaluation  # tips in dollars
  optional = {f.name for f in decl.features if not f.required}
  # company is missing in about a third of the trips, the dropoff tract in
  # over a quarter, a few coordinates in 3%.
  assert {"company", "dropoff_census_tract", "dropoff_latitude"} <= optional
  assert {"fare", "payment_type", "trip_start_hour"}.isdisjoint(optional)
  assert {f.name: f.source for f in decl.features if f.source} == HEADERS


def test_the_run_blesses_and_pushes_a_model_despite_the_gaps(taxi_run):
  result = outcome.read_outcome(taxi_run["metadata"], "taxi")
  threshold = taxi_run["decl"].evaluation.threshold
  assert result.blessed is True and result.metric == "rmse", result
  assert result.value <= threshold, result
  assert f"model blessed: eval rmse {result.value:.4f} (needs <= {threshold}" in \
      taxi_run["stdout"]
  assert taxi_run["stdout"].strip().endswith(f"pushed model: {result.pushed_dir}")
  # No anomaly stopped it: the gaps are allowed by the inferred schema.
  assert result.states["AnomaliesGate"] == "COMPLETE"


def test_the_pushed_model_serves_records_that_lack_optional_features(taxi_run):
  result = outcome.read_outcome(taxi_run["metadata"], "taxi")
  serve = tf.saved_model.load(result.pushed_dir).signatures["serving_examples"]
  files = glob.glob(str(taxi_run["root"] / "taxi" / "eval" / "*.gz"))
  examples = [tf.train.Example.FromString(r.numpy())
              for r in tf.data.TFRecordDataset(files, "GZIP")]

  def present(example, name):
    feature = example.features.feature.get(name)
    return feature is not None and feature.WhichOneof("kind") is not None

  lacking = [e for e in examples if not present(e, "company")]
  assert len(lacking) > 500, len(lacking)
  tips = np.array([e.features.feature["tips"].float_list.value[0] for e in lacking])
  served = serve(examples=tf.constant([e.SerializeToString() for e in lacking]))
  assert set(served) == {"value"}
  rmse = float(np.sqrt(np.mean((served["value"].numpy()[:, 0] - tips) ** 2)))
  threshold = taxi_run["decl"].evaluation.threshold
  assert rmse <= threshold, f"expected rmse <= {threshold} without company, found {rmse}"

  # Every optional feature gone at once, and no label: still an answer.
  bare = tf.train.Example()
  bare.CopyFrom(lacking[0])
  for f in taxi_run["decl"].features:
    if not f.required:
      del bare.features.feature[f.name]
  del bare.features.feature["tips"]
  answer = serve(examples=tf.constant([bare.SerializeToString()]))["value"].numpy()
  assert answer.shape == (1, 1) and np.isfinite(answer).all(), answer
  # The JSON signature takes the renamed columns by the declaration's names.
  json_inputs = tf.saved_model.load(result.pushed_dir).signatures[
      "serving_default"].structured_input_signature[1]
  assert sorted(json_inputs) == sorted(f.name for f in taxi_run["decl"].features)
  # The same records as a JSON client's REST request: the same answers.
  as_json = json_answers(result.pushed_dir, [e.SerializeToString() for e in lacking] +
                         [bare.SerializeToString()], taxi_run["decl"])
  np.testing.assert_allclose(as_json["value"], np.concatenate([served["value"], answer]),
                             atol=1e-4)


NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def test_a_folder_of_mixed_png_and_jpeg_photos_converts_and_trains(tmp_path):
  """Every other digit saved as JPEG: convert keeps the bytes, declares
  `encoding: auto` and the class names, and the model decodes both kinds."""
  from PIL import Image

  from commands.tfrecords.main import main as tfrecords
  from dataset.convert.digits import load_images
  images, labels = load_images()
  for i, (pixels, label) in enumerate(zip(images, labels)):
    folder = tmp_path / "photos" / NAMES[label]
    folder.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(pixels.astype(np.uint8), mode="L").resize((16, 16))
    if i % 2:
      image.save(folder / f"{i}.jpg", format="JPEG", quality=95)
    else:
      image.save(folder / f"{i}.png", format="PNG")
  assert tfrecords(["convert", "images", str(tmp_path / "photos"), "--output",
                    str(tmp_path / "digits"), "--eval-percent", "20"]) == 0
  decl = declaration.load(str(tmp_path / "digits" / "dataset.yaml"))
  assert decl.features[0].image.encoding == "auto"
  assert decl.label.classes == tuple(sorted(NAMES))

  code, out, err = run_local("--dataset", str(tmp_path / "digits" / "dataset.yaml"),
                             "--output-dir", str(tmp_path / "runs"),
                             "--min-accuracy", "0.85", "--train-steps", "400")
  assert code == 0, err[-3000:]
  result = outcome.read_outcome(str(tmp_path / "runs" / "digits" / "metadata.sqlite"), "digits")
  assert result.blessed and result.value >= 0.85, result
  serve = tf.saved_model.load(result.pushed_dir).signatures["serving_examples"]
  files = glob.glob(str(tmp_path / "digits" / "eval" / "*.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  served = serve(examples=tf.constant(records))
  names = served["all_classes"].numpy()[0].tolist()
  assert names == [n.encode() for n in sorted(NAMES)]
  kinds = {tf.train.Example.FromString(r).features.feature["image"].bytes_list.value[0][:2]
           for r in records}
  assert kinds == {b"\x89P", b"\xff\xd8"}, kinds  # PNG and JPEG side by side
  labels_ = np.array([tf.train.Example.FromString(r).features.feature["label"]
                      .int64_list.value[0] for r in records])
  accuracy = float((served["probabilities"].numpy().argmax(axis=1) == labels_).mean())
  assert accuracy >= 0.85, f"expected >= 0.85 on both formats, found {accuracy:.3f}"
  as_json = json_answers(result.pushed_dir, records, decl)
  np.testing.assert_allclose(as_json["probabilities"], served["probabilities"], atol=1e-5)
  assert (as_json["all_classes"] == served["all_classes"].numpy()).all()

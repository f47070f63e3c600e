"""The serving check (components/serving_check/check.py) on real SavedModels, each loaded in a
fresh process as the ServingCheck step loads it: a model that serves as its
contract says passes, with latency figures; each way a model can fail to
serve is refused, with its reason in one line. The pipeline's own use of it,
blessed model and latency budget, is in test_e2e and test_kubeflow_steps."""

import os

import pytest
import tensorflow as tf

from components.serving_check.serving_check import run_check

CLASSES = 3
CONTRACT = {"signature": "serving_examples", "input": "examples", "label": "label",
            "probabilities": "probabilities",
            "outputs": {"probabilities": {"dtype": "float32", "shape": [None, CLASSES]}},
            "json": {"signature": "serving_default",
                     "inputs": {"x": {"dtype": "float32", "shape": [None, CLASSES]}}}}
CHECKS = ["loads", "signature", "answers", "outputs", "finite", "probabilities", "json"]


def _logits(serialized, required=("x",)):
  spec = {"x": tf.io.FixedLenFeature([CLASSES], tf.float32)}
  if "label" in required:
    spec["label"] = tf.io.FixedLenFeature([1], tf.int64)
  return tf.io.parse_example(serialized, spec)["x"]


OUTPUTS = {
    "good": lambda s: {"probabilities": tf.nn.softmax(_logits(s))},
    "nan": lambda s: {"probabilities": tf.nn.softmax(_logits(s)) * float("nan")},
    "sigmoid": lambda s: {"probabilities": tf.sigmoid(_logits(s))},
    "renamed": lambda s: {"scores": tf.nn.softmax(_logits(s))},
    "one_column": lambda s: {"probabilities": tf.nn.softmax(_logits(s))[:, :1]},
    "needs_label": lambda s: {"probabilities": tf.nn.softmax(_logits(s, ("x", "label")))},
}


# serving_default, the JSON clients' signature: x as it is, or not quite.
JSON = {
    "json_differs": (tf.float32, lambda x: {"probabilities": tf.nn.softmax(x * 1.01)}),
    "json_int": (tf.int64, lambda x: {"probabilities": tf.nn.softmax(tf.cast(x, tf.float32))}),
}


def save(folder, name: str, json_signature: bool = True) -> str:
  module = tf.Module()
  module.serve = tf.function(OUTPUTS.get(name, OUTPUTS["good"]), input_signature=[
      tf.TensorSpec([None], tf.string, name="examples")])
  signatures = {"serving_examples": module.serve}
  if json_signature:
    dtype, fn = JSON.get(name, (tf.float32, lambda x: {"probabilities": tf.nn.softmax(x)}))
    module.serve_json = tf.function(fn, input_signature=[
        tf.TensorSpec([None, CLASSES], dtype, name="x")])
    signatures["serving_default"] = module.serve_json
  path = os.path.join(str(folder), name)
  tf.saved_model.save(module, path, signatures=signatures)
  return path


@pytest.fixture(scope="module")
def requests(tmp_path_factory):
  """Serialized examples as the step sends them: features, no label."""
  path = str(tmp_path_factory.mktemp("requests") / "requests.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    for i in range(40):
      writer.write(tf.train.Example(features=tf.train.Features(feature={
          "x": tf.train.Feature(float_list=tf.train.FloatList(
              value=[i % 3, 1.0, -i / 10]))})).SerializeToString())
  return path


def test_a_model_that_serves_as_promised_passes_with_its_latency(tmp_path, requests):
  result = run_check(save(tmp_path, "good"), requests, CONTRACT, {})
  assert result["passed"] and result["reason"] == "", result
  assert [c["name"] for c in result["checks"]] == CHECKS, result
  assert result["checks"][-1]["detail"].startswith(
      "serving_default answered 40 REST instances (1 KB of JSON) as serving_examples did"), \
      result["checks"][-1]
  assert result["examples"] == 40
  for batch, requests_sent in (("batch_1", 200), ("batch_64", 50)):
    figures = result["latency_ms"][batch]
    assert 0 < figures["p50"] <= figures["p99"], figures
    assert figures["requests"] == requests_sent, figures


def test_a_slow_model_is_timed_on_fewer_requests_not_for_minutes(tmp_path, requests):
  """Past its time (here none), latency stops at 20 requests a batch size."""
  result = run_check(save(tmp_path, "good"), requests, CONTRACT, {}, latency_seconds=0)
  assert result["passed"], result
  assert {b: f["requests"] for b, f in result["latency_ms"].items()} == {
      "batch_1": 20, "batch_64": 20}, result["latency_ms"]


@pytest.mark.parametrize("name, reason", [
    ("nan", "finite: probabilities: NaN or infinity for 40 of 40 examples"),
    ("sigmoid", "probabilities: expected probabilities in [0, 1] summing to 1 for every "
                "example, found 40 of 40 that do not"),
    ("renamed", "outputs: expected the outputs ['probabilities'], found ['scores']"),
    ("one_column", "outputs: expected 'probabilities' as float32 [40, 3] for 40 examples, "
                   "found float32 [40, 1]"),
    ("needs_label", "answers: serving_examples failed on 40 eval examples: "
                    "InvalidArgumentError: "),
    ("json_differs", "json: expected serving_default to answer 40 REST instances as "
                     "serving_examples did, to 1e-05; the largest difference is "),
    ("json_int", "json: serving_default's inputs differ from the declared features: "
                 "'x' is int64 [None, 3], declared float32 [None, 3]"),
])
def test_a_model_that_does_not_serve_is_refused_with_its_reason(tmp_path, requests,
                                                                 name, reason):
  result = run_check(save(tmp_path, name), requests, CONTRACT, {})
  assert not result["passed"], result
  assert result["reason"].startswith(reason), (reason, result["reason"])
  assert not result["latency_ms"], "a model that answers wrongly was timed"


def test_a_model_that_does_not_load_is_refused(tmp_path, requests):
  path = save(tmp_path, "good")
  with open(os.path.join(path, "saved_model.pb"), "wb") as f:
    f.write(b"not a SavedModel")
  result = run_check(path, requests, CONTRACT, {})
  assert not result["passed"]
  assert result["reason"].startswith(
      f"loads: the SavedModel at {path} did not load in a fresh process: "), result["reason"]


def test_a_missing_signature_is_refused(tmp_path, requests):
  module = tf.Module()
  module.v = tf.Variable(1.0)
  path = str(tmp_path / "no_signature")
  tf.saved_model.save(module, path)
  result = run_check(path, requests, CONTRACT, {})
  assert result["reason"] == ("signature: expected a signature 'serving_examples', "
                              "found none"), result["reason"]


def test_a_model_without_a_json_signature_is_refused(tmp_path, requests):
  result = run_check(save(tmp_path, "good", json_signature=False), requests, CONTRACT, {})
  assert result["reason"] == ("json: expected a signature 'serving_default' for JSON "
                              "clients, found ['serving_examples']"), result["reason"]


def test_a_latency_budget_is_a_check(tmp_path, requests):
  path = save(tmp_path, "good")
  result = run_check(path, requests, CONTRACT, {"batch_64": 0.000001, "batch_1": 60000})
  assert not result["passed"]
  latency = [c for c in result["checks"] if c["name"] == "latency"]
  assert [c["ok"] for c in latency] == [True, False], latency
  p99 = result["latency_ms"]["batch_64"]["p99"]
  assert result["reason"] == f"latency: p99 at batch 64: {p99:.2f} ms, budget 1e-06 ms", \
      result["reason"]

"""The Evaluator's executor, run for real (TFMA on Beam's in-process runner)
on real SavedModels: a candidate exported with both signatures judged
against a served model pushed before `serving_examples` existed, whose only
signature, `serving_default`, takes serialized Examples."""

import dataclasses
import json
import os

import pytest
import tensorflow as tf
from tfx.types import standard_artifacts, standard_component_specs
from tfx.utils import proto_utils

from components.evaluator import evaluator
from components.evaluator.eval_config import eval_config
from dataset.types import Label
from tests.conftest import digits_decl  # noqa: F401  (a fixture)
from trainer import warm_start

CLASSES = 3


def _probabilities(serialized):
  x = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([CLASSES], tf.float32)})["x"]
  return {"probabilities": tf.nn.softmax(x * 3)}


def save_model(uri: str, signatures: tuple) -> None:
  module = tf.Module()
  module.serve = tf.function(_probabilities, input_signature=[
      tf.TensorSpec([None], tf.string, name="examples")])
  tf.saved_model.save(module, os.path.join(uri, "Format-Serving"),
                      signatures={name: module.serve for name in signatures})


def examples(uri: str) -> standard_artifacts.Examples:
  artifact = standard_artifacts.Examples()
  artifact.uri, artifact.split_names = uri, '["eval"]'
  os.makedirs(os.path.join(uri, "Split-eval"))
  path = os.path.join(uri, "Split-eval", "data.tfrecord.gz")
  with tf.io.TFRecordWriter(path, "GZIP") as writer:
    for i in range(300):
      label = i % CLASSES
      x = [1.0 if c == label else 0.0 for c in range(CLASSES)]
      x[(label + 1) % CLASSES] += 1.2 if i % 10 == 0 else 0.0  # 1 in 10 a miss
      writer.write(tf.train.Example(features=tf.train.Features(feature={
          "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
          "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
          .SerializeToString())
  return artifact


@pytest.mark.parametrize("served_signatures", [
    ("serving_default",),  # pushed before serving_examples existed
    ("serving_examples", "serving_default")])
def test_a_served_model_of_either_export_is_the_baseline(tmp_path, digits_decl,  # noqa: F811
                                                         served_signatures):
  decl = dataclasses.replace(digits_decl, label=Label("label", CLASSES))
  decl = dataclasses.replace(decl, evaluation=dataclasses.replace(decl.evaluation,
                                                                  threshold=0.5))
  candidate, baseline = standard_artifacts.Model(), standard_artifacts.Model()
  candidate.uri, baseline.uri = str(tmp_path / "candidate"), str(tmp_path / "baseline")
  save_model(candidate.uri, ("serving_examples", "serving_default"))
  save_model(baseline.uri, served_signatures)
  with open(os.path.join(baseline.uri, warm_start.SOURCE), "w") as f:
    f.write("/serving/1700000000")
  evaluation, blessing = standard_artifacts.ModelEvaluation(), standard_artifacts.ModelBlessing()
  evaluation.uri, blessing.uri = str(tmp_path / "evaluation"), str(tmp_path / "blessing")
  keys = standard_component_specs
  evaluator.Executor().Do(
      {keys.EXAMPLES_KEY: [examples(str(tmp_path / "examples"))],
       keys.MODEL_KEY: [candidate], keys.BASELINE_MODEL_KEY: [baseline]},
      {keys.EVALUATION_KEY: [evaluation], keys.BLESSING_KEY: [blessing]},
      {keys.EVAL_CONFIG_KEY: proto_utils.proto_to_json(eval_config(decl, decl.evaluation)),
       keys.EXAMPLE_SPLITS_KEY: '["eval"]',
       evaluator.RULES: json.dumps(dataclasses.asdict(decl.evaluation))})
  judged = evaluator.judgement(blessing.uri)
  assert judged["judged_against"] == "1700000000", judged
  # The same answers from both: the baseline was called, on its own signature.
  assert judged["value"] == pytest.approx(0.9, abs=0.02), judged
  assert judged["baseline_value"] == judged["value"] and judged["change"] == 0, judged
  assert blessing.get_int_custom_property("blessed") == 1, judged

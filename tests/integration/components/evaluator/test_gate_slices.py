"""Sliced gates as TFMA computes them: the slicing specs TFMA really runs,
each slice's verdict, its interval, and what the run page draws.

TFMA runs for real here, on predictions stored beside the examples (its
model-agnostic mode), so the slicing specs are tested as TFMA reads them,
not as we hope it does (tensorflow/model-analysis#150). The declaration's
`evaluation.slices` themselves: tests/unit/components/evaluator/
test_evaluator_slices.py."""

import dataclasses

import pytest
import tensorflow as tf
import tensorflow_model_analysis as tfma
from google.protobuf import json_format, text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from components import ui_artifacts
from components.evaluator import gate
from components.evaluator.eval_config import eval_config, slicing_spec
from components.evaluator.evaluation import load, load_matrices, per_class
from dataset.thresholds import Evaluation, Slice
from dataset.types import Label
from tests.unit.components.evaluator.test_evaluator_slices import CONFIG

# Judged on the interval: TFMA's eval_config then holds no change threshold,
# which a model-agnostic run (no baseline model to load) refuses.
BINARY = dataclasses.replace(CONFIG, declaration=dataclasses.replace(
    CONFIG.declaration, label=Label("label", 2, ("even", "odd")),
    evaluation=dataclasses.replace(CONFIG.declaration.evaluation, max_change_on="interval")))
SITES = {"A": 400, "B": 400, "C": 400, "D": 100, "E": 20}


SCHEMA = """
feature {name: "site" type: BYTES presence {min_fraction: 1} shape {dim {size: 1}}}
feature {name: "age" type: FLOAT presence {min_fraction: 1} shape {dim {size: 1}}}
feature {name: "label" type: INT presence {min_fraction: 1} shape {dim {size: 1}}}
feature {name: "served" type: FLOAT presence {min_fraction: 1} shape {dim {size: 2}}}
feature {name: "candidate" type: FLOAT presence {min_fraction: 1} shape {dim {size: 2}}}
"""



def _example(site: str, age: float, label: int, candidate_right: bool) -> bytes:
  right, wrong = [0.9, 0.1], [0.1, 0.9]  # class 0's and class 1's probabilities
  truth = right if label == 0 else wrong
  miss = wrong if label == 0 else right
  features = {
      "site": tf.train.Feature(bytes_list=tf.train.BytesList(value=[site.encode()])),
      "age": tf.train.Feature(float_list=tf.train.FloatList(value=[age])),
      "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
      # The served model is right everywhere; the candidate as told.
      "served": tf.train.Feature(float_list=tf.train.FloatList(value=truth)),
      "candidate": tf.train.Feature(float_list=tf.train.FloatList(
          value=truth if candidate_right else miss))}
  return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def judge_slices(found, rules):
  return gate.judge(found, rules, served=True)[1]


def judge_whole(found, rules):
  return gate.judge(found, rules, served=True)[0]["failure"]


def _without_auc(specs):
  return [tfma.MetricsSpec(metrics=[m for m in spec.metrics if m.class_name != "AUC"],
                           binarize=spec.binarize if spec.HasField("binarize") else None)
          for spec in specs]


@pytest.fixture(scope="module")
def evaluation_output(tmp_path_factory):
  """TFMA's output for a candidate that is wrong on site D (every example)
  and on ages 65 and over (every fifth), right elsewhere, against a served
  model right everywhere; with the candidate's true confusion matrix."""
  folder = tmp_path_factory.mktemp("slices")
  path = str(folder / "examples.tfrecord")
  n, truth = 0, {}
  with tf.io.TFRecordWriter(path) as writer:
    for site, count in SITES.items():
      for i in range(count):
        age = float((n * 7) % 90)
        n += 1
        right = site != "D" and not (age >= 65 and i % 5 == 0)
        writer.write(_example(site, age, i % 2, right))
        key = (i % 2, i % 2 if right else 1 - i % 2)
        truth[key] = truth.get(key, 0) + 1
  slices = (Slice("site"), Slice("age", buckets=(18.0, 65.0)))
  config = tfma.EvalConfig(
      model_specs=[tfma.ModelSpec(name="candidate", label_key="label",
                                  prediction_key="candidate"),
                   tfma.ModelSpec(name="baseline", label_key="label", prediction_key="served",
                                  is_baseline=True)],
      slicing_specs=[tfma.SlicingSpec()] + [slicing_spec(s) for s in slices],
      # The metrics components/evaluator/eval_config.py asks for with two classes (the
      # confusion matrix, and the ROC curve's matrices for class 1), each
      # value with its 95% interval; not AUC, which nothing here reads: at
      # TFMA's 10,000 thresholds, jackknifed, it took this run from 16.4 s
      # to 54.7 s (docs/performance.md).
      metrics_specs=_without_auc(eval_config(BINARY.declaration, BINARY.evaluation).metrics_specs),
      options=eval_config(CONFIG.declaration, CONFIG.evaluation).options)
  out = str(folder / "evaluation")
  tfma.run_model_analysis(eval_config=config, data_location=path, output_path=out,
                          schema=text_format.Parse(SCHEMA, schema_pb2.Schema()))
  return out, slices, truth


@pytest.fixture(scope="module")
def evaluated(evaluation_output):
  out, slices, _ = evaluation_output
  return load(out), slices


def test_each_value_and_each_bucket_is_a_slice_tfma_computes(evaluated):
  found, _ = evaluated
  keys = {k for k in found if k}
  assert keys == {(("site", s),) for s in SITES} | {
      (("age", b),) for b in ("[-inf, 18)", "[18, 65)", "[65, inf)")}, sorted(keys)
  assert found[(("site", "D"),)]["candidate"]["example_count"] == SITES["D"]
  assert found[(("site", "D"),)]["candidate"]["sparse_categorical_accuracy"] == 0.0
  assert found[(("site", "A"),)]["baseline"]["sparse_categorical_accuracy"] == 1.0


def test_a_slice_worse_than_served_refuses_and_names_itself(evaluated):
  found, slices = evaluated
  # The whole passes an allowed drop of 0.15 (it falls about 0.13); site D
  # does not, nor the oldest ages; site E is too small to judge.
  rules = Evaluation("accuracy", threshold=0.5, max_change=0.15, slices=slices,
                     min_slice_examples=100)
  whole = found[()]["candidate"]["sparse_categorical_accuracy"]
  assert whole >= 1 - 0.15, whole
  rows = {row["slice"]: row for row in judge_slices(found, rules)}
  assert rows["site=D"]["failure"] == (
      "slice site=D accuracy 0.0000 < 0.5 (the threshold), served 1.0000 "
      "(change -1.0000 < -0.15) (100 examples)"), rows["site=D"]
  older = rows["age=[65, inf)"]
  assert older["failure"].startswith("slice age=[65, inf) accuracy 0.7"), older
  assert "served 1.0000 (change -0.2" in older["failure"]
  assert older["failure"].endswith(f"< -0.15) ({older['examples']} examples)"), older
  # Site E, 20 examples, is small: judged on its evidence, and it passes
  # (the candidate misses one of 20), saying what drop it could have shown;
  # the only interval judged, so at 95%.
  small = rows["site=E"]
  assert small["on"] == "evidence" and small["examples"] == SITES["E"], small
  assert small["failure"] == "" and small["note"].startswith(
      "slice site=E accuracy 0.9500, served 1.0000 (20 examples): passes on its evidence; "
      "change -0.0500, 95% interval "), small["note"]
  assert "for the worse would have shown" in small["note"], small["note"]
  assert [r for r in rows.values() if r["failure"]] == [rows["age=[65, inf)"], rows["site=D"]]


def test_a_small_slice_that_collapsed_is_refused_on_its_interval(evaluated):
  """Site D (100 examples) judged with a minimum of 150: small, its whole
  interval far beyond the allowed drop; the refusal names the slice, both
  values, the interval widened for the slices judged, and the count."""
  found, slices = evaluated
  rules = Evaluation("accuracy", threshold=0.0, max_change=0.15, slices=slices[:1],
                     min_slice_examples=150)
  whole, rows = gate.judge(found, rules, served=True)
  by_name = {r["slice"]: r for r in rows}
  d = by_name["site=D"]
  assert d["on"] == "evidence" and d["judged"], d
  # Five sites, each small but A-C (400) and the whole: two intervals judged.
  family = [r for r in [whole] + rows if r["on"] in ("interval", "evidence")]
  assert {r["slice"] for r in family} == {"site=D", "site=E"}, family
  assert d["confidence"] == pytest.approx(1 - 0.05 / 2)
  assert d["failure"].startswith("slice site=D accuracy 0.0000, served 1.0000 (change "
                                 "-1.0000, 97.5% interval "), d["failure"]
  assert d["failure"].endswith(": all of it < -0.15; 100 examples)"), d["failure"]
  assert d["change_high"] < -0.15, d
  # The widened interval holds TFMA's 95% one.
  low, high = found[(("site", "D"),)]["change interval"]["sparse_categorical_accuracy"]
  assert d["change_low"] <= low and d["change_high"] >= high, (d, low, high)
  assert gate.failures(whole, rows) == [d["failure"]]


def test_a_small_slice_moved_within_noise_passes_and_a_tiny_whole_is_judged_too(evaluated):
  """The oldest ages lost about a fifth against a served model right on all:
  judged on the estimate (a minimum of 100) that refuses an allowed drop of
  0.15; judged as small, on its interval widened for 9 rows, it does not
  when the allowed drop is within that interval. The whole, small under a
  minimum of 5000, is judged here and TFMA's estimate waived."""
  found, slices = evaluated
  key = "sparse_categorical_accuracy"
  older = found[(("age", "[65, inf)"),)]
  change, high = older["change"][key], older["change interval"][key][1]
  rules = Evaluation("accuracy", threshold=0.0, max_change=(-change + -high) / 2,
                     slices=slices, min_slice_examples=5000)
  # On the estimate (a large slice), the same drop refuses.
  large = {r["slice"]: r for r in judge_slices(
      found, dataclasses.replace(rules, min_slice_examples=100))}
  assert large["age=[65, inf)"]["failure"], large["age=[65, inf)"]
  whole, rows = gate.judge(found, rules, served=True)
  by_name = {r["slice"]: r for r in rows}
  assert gate.waives_tfma(whole) and whole["confidence"] == pytest.approx(1 - 0.05 / 9)
  assert by_name["age=[65, inf)"]["failure"] == "", by_name["age=[65, inf)"]
  assert by_name["age=[65, inf)"]["note"].startswith("slice age=[65, inf) accuracy 0.7"), \
      by_name["age=[65, inf)"]
  # Site D's collapse is beyond any noise, however wide the family.
  assert [r["slice"] for r in rows if r["failure"]] == ["site=D"], rows
  assert whole["note"].startswith("the whole accuracy 0.8") and \
      "passes on its evidence" in whole["note"], whole


def test_per_slice_overrides_loosen_one_value_or_one_feature(evaluated):
  found, _ = evaluated
  lenient = (Slice("site", values=(("D", 0.0, 1.0),)),
             Slice("age", buckets=(18.0, 65.0), max_change=0.5))
  rules = Evaluation("accuracy", threshold=0.5, max_change=0.15, slices=lenient)
  assert [r["failure"] for r in judge_slices(found, rules) if r["failure"]] == []


def test_the_change_comes_with_its_paired_95_percent_interval(evaluated):
  found, _ = evaluated
  key = "sparse_categorical_accuracy"
  change = found[()]["change"][key]
  low, high = found[()]["change interval"][key]
  # The served model is right on every example and the candidate wrong on
  # about one in eight: a change near -0.13, known to within a few points.
  assert -0.16 < change < -0.10 and low < change < high < 0, (low, change, high)
  assert high - low < 0.08, (low, high)
  judged = judged_of(found)
  assert (judged["change"], judged["change_low"], judged["change_high"]) == (
      change, low, high), judged


def judged_of(found) -> dict:
  from components.evaluator.evaluation import judged
  return judged(found, json_format.MessageToJson(eval_config(CONFIG.declaration, CONFIG.evaluation),
                                                 preserving_proto_field_name=True))


def test_judged_on_its_interval_a_change_is_refused_only_when_all_of_it_is_worse(evaluated):
  found, slices = evaluated
  key = "sparse_categorical_accuracy"
  older = found[(("age", "[65, inf)"),)]
  change, (low, high) = older["change"][key], older["change interval"][key]
  # An allowed drop between the estimate and the interval's best end: the
  # estimate refuses, the interval does not.
  between = (-change + -high) / 2
  lenient = (Slice("site", values=(("D", 0.0, 1.0),)), slices[1])
  estimate = Evaluation("accuracy", 0.5, between, lenient)
  interval = dataclasses.replace(estimate, max_change_on="interval")
  assert [r["slice"] for r in judge_slices(found, estimate) if r["failure"]] == [
      "age=[65, inf)"]
  assert [r["failure"] for r in judge_slices(found, interval) if r["failure"]] == []
  # Beyond the interval's best end, the interval refuses too, and says so.
  strict = dataclasses.replace(interval, max_change=-high / 2)
  (row,) = [r for r in judge_slices(found, strict) if r["failure"]]
  failure = row["failure"]
  # Widened for the nine intervals judged (the whole, seven large slices
  # and site E, small): each at 1 - 0.05 / 9, holding TFMA's 95% one.
  assert row["confidence"] == pytest.approx(1 - 0.05 / 9)
  assert row["change_low"] < low < high < row["change_high"], (row, low, high)
  assert failure.startswith("slice age=[65, inf) accuracy 0.7") and \
      f"99.44% interval {row['change_low']:+.4f} to {row['change_high']:+.4f}: all of it < " \
      in failure, failure
  # The whole, by its interval: refused below it, not above.
  whole_change, (whole_low, whole_high) = found[()]["change"][key], found[()][
      "change interval"][key]
  assert judge_whole(found, dataclasses.replace(interval, max_change=-whole_low + 0.02)) == ""
  refusal = judge_whole(found, dataclasses.replace(interval, max_change=-whole_high / 4))
  assert refusal.startswith("the whole accuracy 0.8") and "all of it <" in refusal, refusal
  # With the estimate, TFMA's thresholds judge the whole: nothing here.
  assert judge_whole(found, dataclasses.replace(estimate, max_change=0.0)) == "", whole_change


def test_the_confusion_matrix_is_the_run_pages_and_the_reports(evaluation_output):
  out, _, truth = evaluation_output
  matrices = load_matrices(out)
  assert matrices["counts"] == pytest.approx(truth), (matrices["counts"], truth)
  # As the KFP frontend validates it (MetricsVisualizations.tsx
  # validateConfusionMatrix): a label per row, each row as long as there are rows.
  shown = ui_artifacts.confusion_matrix(matrices["counts"], ["even", "odd"])
  assert [a["displayName"] for a in shown["annotationSpecs"]] == ["even", "odd"]
  assert [r["row"] for r in shown["rows"]] == [
      [truth.get((t, p), 0) for p in (0, 1)] for t in (0, 1)], shown
  rows = {r[0]: r for r in per_class(matrices["counts"], ["even", "odd"])}
  odd = truth.get((1, 0), 0) + truth.get((1, 1), 0)
  assert rows["odd"][1] == odd and rows["odd"][2] == pytest.approx(truth[(1, 1)] / odd)


def test_two_classes_give_the_run_page_a_roc_curve(evaluation_output):
  points = ui_artifacts.roc_points(load_matrices(evaluation_output[0])["thresholds"])
  # As ROCCurveHelper.tsx validates them: three numbers per point.
  assert points and all(set(p) == {"confidenceThreshold", "recall", "falsePositiveRate"}
                        and all(isinstance(v, float) for v in p.values()) for p in points)
  by_threshold = sorted(points, key=lambda p: p["confidenceThreshold"])
  # Every example scores 0.1 or 0.9 for class 1: below 0.1 all are positive,
  # between the two the candidate's own recall and false positives show.
  assert by_threshold[0]["recall"] == 1.0 and by_threshold[-1]["recall"] == 0.0
  middle = [p for p in points if 0.2 < p["confidenceThreshold"] < 0.8]
  assert middle and 0.7 < middle[0]["recall"] < 1.0, middle[:1]

"""The served model scored on the newest span, both its splits, with TFMA
for real on a real SavedModel (tests/unit/components/evaluator/
test_evaluator.py's), recorded beside the serving dir's versions; the line
when it fell below its threshold."""

import dataclasses

from tfx.utils import proto_utils

from components.evaluator.eval_config import eval_config
from components.served_score import score, served_score
from dataset.types import Label
from tests.conftest import digits_decl  # noqa: F401  (a fixture)
from tests.integration.components.evaluator.test_evaluator import CLASSES


def _decl(digits_decl, **evaluation):  # noqa: F811
  decl = dataclasses.replace(digits_decl, label=Label("label", CLASSES))
  return dataclasses.replace(decl, evaluation=dataclasses.replace(decl.evaluation,
                                                                  **evaluation))


def test_the_verdict_reads_the_metrics_direction_and_its_blessing():
  rmse = {"version": "7", "span": 4, "metric": "rmse", "value": 0.30, "low": 0.25,
          "high": 0.35, "higher_is_better": False, "threshold": 0.5, "max_change": 0.05}
  assert score.verdict(rmse, {"metric": "rmse", "value": 0.28}) == ""  # 0.02 worse: within
  assert score.verdict(rmse, {"metric": "rmse", "value": 0.20}) == (
      "served model (version 7) on span 4: rmse 0.3000 [0.2500, 0.3500], 0.1000 worse than "
      "its 0.2000 at its blessing (max_change 0.05)")
  assert score.verdict(rmse, {"metric": "mae", "value": 0.20}) == ""  # another metric's value
  assert score.verdict({**rmse, "value": 0.6}, None).endswith("past its threshold 0.5")
  assert score.said({**rmse, "line": ""}).endswith("rmse 0.3000 [0.2500, 0.3500], within its "
                                                   "threshold 0.5")
  assert score.said({"note": "nothing is served yet"}) == "served model: nothing is served yet"


def test_newest_span_splits_and_their_data_version():
  names = ["train_span1", "eval_span1", "train_span2", "eval_span2"]
  assert score.newest_span_splits(names) == ["eval_span2", "train_span2"]
  assert score.newest_span_splits(["train", "eval"]) == ["eval"]
  assert score.data_version(["eval_span4_v2", "train_span4_v2"]) == 2
  assert score.record_path("s3://b/serving", "7", 4, 2) == "s3://b/serving/monitoring/7/span-4-v2.json"


def test_the_chart_marks_a_push_and_a_rollback_and_draws_the_threshold():
  from components.served_score import chart
  records = [{"span": span, "version": version, "metric": "accuracy", "value": value,
              "low": value - 0.02, "high": value + 0.02, "threshold": 0.9}
             for span, version, value in ((2, "100", 0.95), (3, "200", 0.97), (4, "300", 0.96))]
  drawn = chart.svg(records, {"300": "100"})  # version 300 is a rollback's copy of 100
  assert ">push of 200</text>" in drawn and ">rollback to 100</text>" in drawn, drawn
  assert "push of 300" not in drawn and "<title>threshold 0.9</title>" in drawn, drawn
  assert drawn.count("<circle") == 3, drawn


def test_the_scoring_config_keeps_the_blessing_metric_and_the_count(digits_decl):  # noqa: F811
  decl = _decl(digits_decl)
  config = served_score.scoring_config(
      proto_utils.proto_to_json(eval_config(decl, decl.evaluation)), "serving_default")
  kept = [m.class_name for spec in config.metrics_specs for m in spec.metrics]
  assert kept == ["ExampleCount", "SparseCategoricalAccuracy"], kept  # no plots
  assert not any(m.per_slice_thresholds for spec in config.metrics_specs for m in spec.metrics)
  assert config.options.compute_confidence_intervals.value, config.options
  assert [s.signature_name for s in config.model_specs] == ["serving_default"]


def test_the_recorded_interval_stays_within_what_accuracy_can_take(digits_decl):  # noqa: F811
  """A served model that fell to almost no right answer on a drifted span:
  TFMA's interval runs below 0; the record and its line start at 0."""
  decl = _decl(digits_decl)
  config = proto_utils.proto_to_json(eval_config(decl, decl.evaluation))
  key = "sparse_categorical_accuracy"
  found = {(): {"candidate": {key: 0.0022, "example_count": 900.0},
                "candidate interval": {key: (-0.0024, 0.0069)}}}
  record = score.scored(found, config, "7", 3, decl.evaluation)
  assert (record["low"], record["high"], record["count"]) == (0.0, 0.0069, 900.0), record
  assert score.verdict(record, None).startswith(
      "served model (version 7) on span 3: accuracy 0.0022 [0.0000, 0.0069], past its"), record

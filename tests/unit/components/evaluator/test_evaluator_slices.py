"""Sliced gates: the declaration's `evaluation.slices`, and the EvalConfig
and schema the Evaluator hands TFMA for them. As TFMA computes them, each
slice's verdict: tests/integration/components/evaluator/test_gate_slices.py."""

import dataclasses

import pytest
import tensorflow_model_analysis as tfma
from google.protobuf import json_format

from components.evaluator.eval_config import eval_config
from dataset import declaration
from pipeline.config import PipelineConfig
from tests.conftest import DIGITS_SCHEMA, DIGITS_YAML, digits_raw, write_declaration

CONFIG = PipelineConfig(pipeline_name="d", pipeline_root="/r", serving_dir="/s",
                        declaration=declaration.load(DIGITS_YAML))



def _declare(tmp_path, evaluation: dict) -> str:
  raw = digits_raw()
  raw["data"]["root"] = str(tmp_path)
  raw["schema"] = DIGITS_SCHEMA
  raw["evaluation"] = evaluation
  return write_declaration(tmp_path, raw)


@pytest.mark.parametrize("slices, field, expected", [
    (["colour"], "evaluation.slices[0].feature", "a declared categorical feature"),
    (["image"], "evaluation.slices[0].feature", "a declared categorical feature"),
    (["ink"], "evaluation.slices[0].buckets", "ascending numbers"),
    ([{"feature": "ink", "buckets": [5, 1]}], "evaluation.slices[0].buckets",
     "ascending numbers"),
    ([{"feature": "shape", "buckets": [1]}], "evaluation.slices[0].buckets",
     "none: shape is categorical"),
    ([{"feature": "shape", "max_change": -1}], "evaluation.slices[0].max_change",
     "a number >= 0"),
    ([{"feature": "shape", "values": {"round": {"limit": 1}}}],
     "evaluation.slices[0].values.round.limit", "one of the keys threshold, max_change"),
])
def test_a_bad_slice_is_one_error_naming_its_field(tmp_path, slices, field, expected):
  path = _declare(tmp_path, {"slices": slices})
  with pytest.raises(declaration.DeclarationError) as e:
    declaration.load(path)
  assert f"field '{field}': expected {expected}" in str(e.value), str(e.value)


def test_declared_slices_round_trip_through_the_compiled_form(tmp_path):
  decl = declaration.load(_declare(tmp_path, {"max_change": 0.1, "min_slice_examples": 40,
                                              "slices": ["shape", {
                                                  "feature": "ink", "buckets": [10, 20],
                                                  "values": {"[20, inf)": {"threshold": 0.5}}}]}))
  evaluation = decl.evaluation
  assert evaluation.slices[1].bucket_names() == ("[-inf, 10)", "[10, 20)", "[20, inf)")
  assert evaluation.slices[1].rule("[20, inf)", evaluation) == (0.5, 0.1)
  assert evaluation.slices[1].rule("[10, 20)", evaluation) == (0.9, 0.1)
  assert declaration.Declaration.from_dict(decl.contract()).evaluation == evaluation


def test_max_change_on_is_the_estimate_or_the_interval(tmp_path):
  with pytest.raises(declaration.DeclarationError) as e:
    declaration.load(_declare(tmp_path, {"max_change_on": "bound"}))
  assert "field 'evaluation.max_change_on': expected one of estimate, interval, " \
         "found 'bound'" in str(e.value), str(e.value)
  decl = declaration.load(_declare(tmp_path, {"max_change_on": "interval"}))
  # TFMA then judges the value only; the change is the executor's to judge.
  config = eval_config(decl, dataclasses.replace(CONFIG, declaration=decl).evaluation)
  thresholds = [t.threshold for spec in config.metrics_specs for m in spec.metrics
                for t in m.per_slice_thresholds]
  assert len(thresholds) == 1 and not thresholds[0].HasField("change_threshold")
  assert thresholds[0].value_threshold.lower_bound.value == 0.9


def test_without_a_served_model_the_evaluator_computes_no_intervals():
  from components.evaluator.evaluation import thresholds, without_intervals
  asked = json_format.MessageToJson(eval_config(CONFIG.declaration, CONFIG.evaluation), preserving_proto_field_name=True)
  stripped = json_format.Parse(without_intervals(asked), tfma.EvalConfig())
  assert eval_config(CONFIG.declaration, CONFIG.evaluation).options.compute_confidence_intervals.value
  assert not stripped.options.compute_confidence_intervals.value, stripped.options
  # Nothing else changes: the same metrics, slices and thresholds.
  assert stripped.metrics_specs == eval_config(CONFIG.declaration, CONFIG.evaluation).metrics_specs
  assert thresholds(without_intervals(asked)) == thresholds(asked)


def test_the_evaluator_parses_only_the_label_and_the_sliced_features(tmp_path):
  """TFMA is handed a schema of the columns it reads, not every feature: the
  model parses the raw records itself (docs/performance.md)."""
  import json

  from tfx.types import standard_artifacts
  from tfx.utils import io_utils

  from components.evaluator.evaluator import RULES, judged_columns_only
  decl = declaration.load(_declare(tmp_path, {
      "slices": ["shape", {"feature": "ink", "buckets": [10, 20]}]}))
  config = dataclasses.replace(CONFIG, declaration=decl)
  folder = tmp_path / "schema"
  folder.mkdir()
  # A curated schema may group columns: a sparse feature of two the cut drops.
  with open(DIGITS_SCHEMA) as f:
    text = f.read()
  (folder / "schema.pbtxt").write_text(text + """
feature {name: "idx" type: INT} feature {name: "val" type: FLOAT}
sparse_feature {name: "pairs" index_feature {name: "idx"} value_feature {name: "val"}}
""")
  schema = standard_artifacts.Schema()
  schema.uri = str(folder)
  properties = {"eval_config": json_format.MessageToJson(
                    eval_config(config.declaration, config.evaluation), preserving_proto_field_name=True),
                RULES: json.dumps(dataclasses.asdict(config.evaluation))}
  with judged_columns_only({"schema": [schema]}, properties) as given:
    cut = io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(given["schema"][0].uri))
    assert sorted(f.name for f in cut.feature) == ["ink", "label", "shape"], cut
    assert not cut.sparse_feature, cut
    full = io_utils.SchemaReader().read(str(folder / "schema.pbtxt"))
    assert {f.name: f for f in cut.feature}["ink"] == {f.name: f for f in full.feature}["ink"]
  # A pipeline compiled before the rules were passed: every column, as before.
  with judged_columns_only({"schema": [schema]}, {"eval_config": "{}"}) as given:
    assert given["schema"][0].uri == str(folder)

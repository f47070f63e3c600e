"""Drift between two spans, as TFDV measures it with the declaration's thresholds."""

import numpy as np
import pandas as pd
import pytest
import tensorflow_data_validation as tfdv

from components.drift_gate.drift import SIZE, compare, rules_from_json, rules_json
from dataset.declaration import DeclarationError, parse


def _declaration(drift=None):
  raw = {"name": "d", "data": {"root": "/tmp/d", "pattern": "*.gz"},
         "label": {"name": "label", "num_classes": 2},
         "features": {"x": {"kind": "numeric", "dtype": "float"},
                      "y": {"kind": "numeric", "dtype": "float"},
                      "color": {"kind": "categorical", "dtype": "string"}}}
  if drift is not None:
    raw["drift"] = drift
  return parse(raw, "/tmp/d.yaml")


def _stats(frame):
  return tfdv.generate_statistics_from_dataframe(frame)


@pytest.fixture(scope="module")
def spans():
  rng = np.random.default_rng(0)
  before = pd.DataFrame({"x": rng.normal(0, 1, 3000), "y": rng.normal(5, 2, 3000),
                         "color": rng.choice(["red", "green", "blue"], 3000)})
  # x moves by two standard deviations; "blue" is renamed "navy"; y stays.
  after = pd.DataFrame({"x": rng.normal(2, 1, 2800), "y": rng.normal(5, 2, 2800),
                        "color": rng.choice(["red", "green", "navy"], 2800)})
  previous = _stats(before)
  return previous, _stats(after), tfdv.infer_schema(previous)


def test_a_shifted_number_and_a_renamed_category_drift_and_the_rest_does_not(spans):
  previous, current, schema = spans
  found = {m.feature: m for m in compare(current, previous, schema, *rules_from_json(rules_json(_declaration())))}
  assert found["x"].drifted and found["x"].measure == "Jensen-Shannon divergence", found["x"]
  assert found["color"].drifted and found["color"].measure == "L-infinity distance"
  assert not found["y"].drifted and found["y"].value < 0.05, found["y"]
  assert not found[SIZE].drifted, found[SIZE]  # 3000 to 2800 is within 0.5
  assert found["x"].line().startswith("feature 'x': Jensen-Shannon divergence 0.")
  assert "above its threshold 0.1" in found["x"].line()


def test_per_feature_thresholds_and_the_size_bound_apply(spans):
  previous, current, schema = spans
  decl = _declaration({"features": {"x": 1.0}, "size": 0.01, "action": "stop"})
  found = {m.feature: m for m in compare(current, previous, schema, *rules_from_json(rules_json(decl)))}
  assert not found["x"].drifted and found["x"].threshold == 1.0, found["x"]
  assert found[SIZE].drifted and abs(found[SIZE].value - 200 / 3000) < 1e-9, found[SIZE]
  assert decl.drift.action == "stop"


@pytest.mark.parametrize("drift,message", [
    ({"numeric": 0}, "field 'drift.numeric': expected a number above 0 and at most 1"),
    ({"features": {"z": 0.2}}, "field 'drift.features.z': expected a declared feature"),
    ({"features": {"x": "high"}}, "field 'drift.features.x': expected a number above 0"),
    ({"action": "halt"}, "field 'drift.action'"),
    ({"thresold": 0.1}, "field 'drift.thresold': expected one of the keys"),
])
def test_bad_drift_entries_name_the_field(drift, message):
  with pytest.raises(DeclarationError) as e:
    _declaration(drift)
  assert message in str(e.value), str(e.value)

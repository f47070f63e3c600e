"""commands/debug/skew.py on TFDV's statistics of 40 digits: served requests
against a run's training statistics. A feature served shifted past its
threshold, or served by no request, is skewed. The run's statistics, schema
and thresholds are made here as its StatisticsGen, curated schema and
DriftGate would hold them."""

import types

import pytest
import tensorflow_data_validation as tfdv
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from commands.debug import skew
from components.drift_gate import drift
from dataset import declaration
from dataset.convert.rows import write_rows
from store.metadata import store as st
from tests.conftest import DIGITS_SCHEMA, DIGITS_YAML, digit_rows


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
  folder = tmp_path_factory.mktemp("skew")
  schema = text_format.Parse(open(DIGITS_SCHEMA).read(), schema_pb2.Schema())
  write_rows(digit_rows(40), str(folder / "train"), "digits")
  stats = tfdv.generate_statistics_from_tfrecord(
      str(folder / "train" / "*.gz"),
      stats_options=tfdv.StatsOptions(schema=schema, infer_type_from_schema=True))
  return folder, stats, schema


@pytest.fixture
def run_of(monkeypatch, trained):
  """The run skew reads: its training statistics and the declaration's rules."""
  _, stats, schema = trained
  monkeypatch.setattr(st, "find_run", lambda store, pipeline, run: types.SimpleNamespace(
      id="run-1", nodes={}))
  monkeypatch.setattr(skew, "_training", lambda store, run: ("train_span2", stats, schema))
  rules = drift.rules_json(declaration.load(DIGITS_YAML))
  monkeypatch.setattr(skew, "_rules", lambda store, run: drift.rules_from_json(rules))


def _served(folder, name: str, rows) -> str:
  write_rows(rows, str(folder / name), "requests", compression="NONE")
  return str(next((folder / name).glob("*")))


def test_requests_like_the_training_data_are_not_skewed(trained, run_of):
  folder, _, _ = trained
  lines, skewed = skew.skew_lines(None, "digits", None, _served(folder, "same", digit_rows(40)))
  assert not skewed, lines
  assert lines[0].startswith("skew: 40 served examples in ") and lines[0].endswith(
      "against train_span2's statistics (run run-1)")
  assert lines[-1] == "no feature skewed beyond its threshold"


def test_a_shifted_feature_and_one_no_request_carries_are_skewed(trained, run_of):
  folder, _, _ = trained
  rows = [{**{k: v for k, v in row.items() if k != "shape"}, "ink": [0.99]}
          for row in digit_rows(40)]
  lines, skewed = skew.skew_lines(None, "digits", None, _served(folder, "moved", rows))
  assert skewed
  assert lines[-1] == "skewed: ink, shape", lines
  assert "  feature 'shape': in none of the served examples" in lines
  assert any(line.startswith("  feature 'ink'") for line in lines), lines

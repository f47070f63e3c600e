"""commands/debug/skew.py: served requests against a run's training
statistics. A feature served shifted past its threshold, or served by no
request, is skewed; a file that is not served Examples is one line. The
run's statistics, schema and thresholds are made here from 40 digits, as
its StatisticsGen, curated schema and DriftGate would hold them. Then the
listing on measures as TFDV's skew comparators give them: the skewed
features last, as docs/debugging.md says, and a word on a small sample."""

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


def test_a_file_that_is_not_served_examples_is_one_line(tmp_path):
  with pytest.raises(st.StoreError, match="^--examples: no file at /no/such$"):
    skew._requests("/no/such", str(tmp_path))
  text = tmp_path / "log.txt"
  text.write_text("GET /v1/models/digits:predict 200\n" * 4)
  with pytest.raises(st.StoreError, match="expected TFRecords of tf.train.Example, found a "
                                          "broken record"):
    skew._requests(str(text), str(tmp_path))
  empty = tmp_path / "empty.tfrecord"
  empty.write_bytes(b"")
  with pytest.raises(st.StoreError, match="expected served requests, found no records"):
    skew._requests(str(empty), str(tmp_path))


JS, LINF = "Jensen-Shannon divergence", "L-infinity distance"


def _measured():
  return [drift.Measured("alcohol", JS, 0.31, 0.1), drift.Measured("ash", JS, 0.02, 0.1),
          drift.Measured("color", JS, 0.45, 0.1), drift.Measured("hue", JS, 0.05, 0.1),
          drift.Measured("region", LINF, 0.04, 0.1)]


def test_the_features_within_their_thresholds_come_first_the_skewed_ones_last():
  lines, skewed = skew.listing("skew: 400 served examples", 400, _measured(), ["proline"])
  assert skewed
  assert [line.split("'")[1] for line in lines[1:-1]] == [
      "ash", "hue", "region", "alcohol", "color", "proline"], lines
  assert lines[-1] == "skewed: alcohol, color, proline"


def test_a_small_sample_says_its_size_and_why_it_flags_more_easily():
  lines, _ = skew.listing("skew: 26 served examples", 26, _measured(), [])
  assert lines[1] == ("note: 26 served examples are few: by chance alone each share of a "
                      "feature's values moves by about 1/sqrt(26) = 0.20, more than the "
                      "threshold 0.1, so features are flagged as skewed more easily; a "
                      "`skewed` holds from 100 examples (1/threshold^2) on"), lines
  enough, _ = skew.listing("skew: 100 served examples", 100, _measured(), [])
  assert not any(line.startswith("note:") for line in enough), enough

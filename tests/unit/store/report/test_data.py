"""store/report/data.py: the report's statistics and anomalies sections, from
TFDV's own statistics and anomalies protos: each split side by side, train
first, a feature absent from a split said so, every name and value shown as
text; TFDV's Facets view only when opened."""

import gzip

import pandas as pd
import pytest
import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import anomalies_pb2

from store.report import data


@pytest.fixture(scope="module")
def stats():
  train = pd.DataFrame({"ink": [0.1, 0.2, 0.3, 0.4], "shape": ["tall", "tall", "wide", "<b>"]})
  evaluation = pd.DataFrame({"ink": [0.5, 0.5]})
  return {"train": tfdv.generate_statistics_from_dataframe(train),
          "eval": tfdv.generate_statistics_from_dataframe(evaluation)}


def test_statistics_load_train_first_and_skip_a_split_without_them(tmp_path, stats):
  for split in ("eval", "train"):
    (tmp_path / split).mkdir()
    (tmp_path / split / "FeatureStats.pb").write_bytes(stats[split].SerializeToString())
  (tmp_path / "test").mkdir()
  loaded = data.load_statistics({s: str(tmp_path / s) for s in ("eval", "test", "train")})
  assert list(loaded) == ["train", "eval"]
  assert loaded["eval"].datasets[0].num_examples == 2


def test_each_feature_is_a_row_with_each_splits_summary_and_histogram(stats):
  parts = data.statistics_section(stats)
  assert parts[0] == "<p>train: 4 examples, eval: 2 examples</p>"
  rows = parts[1].split("<tbody>")[1].split("</tr>")
  ink = next(r for r in rows if "<td>ink</td>" in r)
  assert "<td>float</td>" in ink and "mean 0.25 ± 0.112; min 0.1, median 0.3, max 0.4" in ink
  assert "mean 0.5 ± 0; min 0.5" in ink and ink.count('aria-label="histogram"') == 2
  shape = next(r for r in rows if "<td>shape</td>" in r)
  assert "3 unique; top tall (2)" in shape and "&lt;b&gt; (1)" in shape and "<b>" not in shape
  assert "<td>absent</td><td></td>" in shape  # eval has no shape
  # Facets, escaped into the frame's attribute: nothing of it runs until opened.
  assert parts[2].startswith("<details ") and "<script" not in parts[2]


def test_no_statistics_and_one_split_say_what_they_can(stats):
  assert data.statistics_section({}) == [
      '<p class="note">StatisticsGen did not run in this run.</p>']
  alone = data.statistics_section({"train": stats["train"]})
  assert alone[0] == "<p>train: 4 examples</p>" and len(alone) == 2  # nothing to compare


def _anomalies(description: str) -> anomalies_pb2.Anomalies:
  found = anomalies_pb2.Anomalies()
  info = found.anomaly_info["shape"]
  info.description = description
  info.short_description = "Unexpected string values"
  info.severity = anomalies_pb2.AnomalyInfo.ERROR
  return found


def test_anomalies_are_a_table_per_split_read_plain_or_gzipped(tmp_path):
  (tmp_path / "train").mkdir()
  (tmp_path / "eval").mkdir()
  (tmp_path / "train" / "SchemaDiff.pb").write_bytes(
      gzip.compress(_anomalies("Examples contain values missing from the schema: "
                               "<b>round</b> (~25%).").SerializeToString()))
  (tmp_path / "eval" / "SchemaDiff.pb").write_bytes(anomalies_pb2.Anomalies().SerializeToString())
  found = data.load_anomalies({"train": str(tmp_path / "train"),
                               "eval": str(tmp_path / "eval")})
  assert list(found) == ["eval", "train"]
  (part,) = data.anomalies_section(found, ran=True)
  assert part.startswith("<h3>train</h3>")
  assert "&lt;b&gt;round&lt;/b&gt; (~25%)" in part and "<b>round" not in part


def test_no_anomalies_or_no_validator_say_so():
  assert data.anomalies_section({"train": anomalies_pb2.Anomalies()}, ran=True) == [
      '<p class="ok">No anomalies: the statistics of train match the schema.</p>']
  assert data.anomalies_section({}, ran=False) == [
      '<p class="note">ExampleValidator did not run in this run.</p>']

"""components/anomalies_gate/anomalies_gate.py: the gate before Transform, run as
TFX runs it, on anomalies written as ExampleValidator writes them and the
image check's (or, on a table, the row check's) findings as ImageCheck
publishes them."""

import json

import pytest
from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.types import standard_artifacts

from components.anomalies_gate import anomalies_gate
from components.image_check.result import ImagesRefused


def _anomalies(tmp_path, per_split: dict):
  """An ExampleAnomalies artifact: `Split-<name>/SchemaDiff.pb` for each split."""
  artifact = standard_artifacts.ExampleAnomalies()
  artifact.uri = str(tmp_path / "anomalies")
  artifact.split_names = "[" + ",".join(f'"{s}"' for s in per_split) + "]"
  for split, found in per_split.items():
    folder = tmp_path / "anomalies" / f"Split-{split}"
    folder.mkdir(parents=True)
    (folder / anomalies_gate.SCHEMA_DIFF).write_bytes(found.SerializeToString())
  return artifact


def _run(artifact, image_check=None) -> None:
  executor = anomalies_gate.AnomaliesGate.EXECUTOR_SPEC.executor_class()
  executor.Do({"anomalies": [artifact], **({"image_check": [image_check]} if image_check
                                           else {})}, {}, {})


def _findings(tmp_path, decision: str):
  """ImageCheck's result with one leak, decided `decision`."""
  found = standard_artifacts.String()
  found.uri = str(tmp_path / "image_check" / "value")
  (tmp_path / "image_check").mkdir()
  (tmp_path / "image_check" / "value").write_text(json.dumps({"findings": [
      {"kind": "leak", "decision": decision, "count": 3,
       "describes": "eval images that repeat a train image"}]}))
  return found


@pytest.mark.parametrize("decision", ["stop", "warn"])
def test_the_image_checks_stop_fails_the_run_naming_the_kind_and_count(tmp_path, decision):
  clean = _anomalies(tmp_path, {"train": anomalies_pb2.Anomalies()})
  if decision == "warn":
    _run(clean, _findings(tmp_path, decision))
    return
  with pytest.raises(ImagesRefused, match="stops the run before Transform: leak: 3 eval "
                                          "images that repeat a train image"):
    _run(clean, _findings(tmp_path, decision))


def test_a_tables_train_row_repeated_in_eval_fails_the_run_as_the_row_check(tmp_path):
  found = standard_artifacts.String()
  found.uri = str(tmp_path / "row_check")
  (tmp_path / "row_check").write_text(json.dumps({"checks": "row check", "findings": [
      {"kind": "leak", "decision": "stop", "count": 2,
       "describes": "eval rows that repeat a train row (the same features)"},
      {"kind": "small_eval_class", "decision": "warn", "count": 1, "describes": "classes"}]}))
  with pytest.raises(ImagesRefused, match=r"the row check stops the run before Transform: "
                                          r"leak: 2 eval rows that repeat a train row"):
    _run(_anomalies(tmp_path, {"train": anomalies_pb2.Anomalies()}), found)


def test_clean_splits_let_the_run_go_on(tmp_path):
  _run(_anomalies(tmp_path, {"train": anomalies_pb2.Anomalies(),
                             "eval": anomalies_pb2.Anomalies()}))


def test_every_anomaly_is_named_with_its_split_and_feature(tmp_path):
  bad = anomalies_pb2.Anomalies()
  info = bad.anomaly_info["age"]
  info.reason.add(short_description="Out-of-range values",
                  description="Unexpectedly large value: 250.")
  bad.dataset_anomaly_info.reason.add(description="Low number of examples: 3.")
  artifact = _anomalies(tmp_path, {"train": anomalies_pb2.Anomalies(), "eval": bad})
  with pytest.raises(anomalies_gate.AnomaliesFound) as raised:
    _run(artifact)
  message = str(raised.value)
  assert ("split 'eval': feature 'age': Out-of-range values: Unexpectedly large "
          "value: 250.") in message, message
  assert "split 'eval': dataset: Low number of examples: 3." in message, message
  assert "split 'train'" not in message and artifact.uri in message, message

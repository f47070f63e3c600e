"""components/anomalies_gate/anomalies_gate.py: the gate after ExampleValidator, run as
TFX runs it, on anomalies written as ExampleValidator writes them."""

import pytest
from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.types import standard_artifacts

from components.anomalies_gate import anomalies_gate


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


def _run(artifact) -> None:
  executor = anomalies_gate.AnomaliesGate.EXECUTOR_SPEC.executor_class()
  executor.Do({"anomalies": [artifact]}, {}, {})


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

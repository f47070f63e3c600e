"""The gate before Transform: anomalies, and what the image check decided
stops the run.

TFX 1.16's ExampleValidator only records anomalies (and a `blessed` flag per
split) and lets Transform and the Trainer run on bad data. This component
reads the anomalies and fails, listing every one, so that the pipeline stops
before Transform; `create_pipeline` makes Transform wait for it. It also
reads ImageCheck's findings (the image check's, or on a table the row
check's), which that step publishes
whatever they are (so the run page shows them on it), and fails on a kind
the declaration decides `stop` (components/image_check/result.py).
"""

import json
import os

from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.dsl.component.experimental.annotations import InputArtifact
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifact_utils, standard_artifacts
from tfx.utils import io_utils

from components.image_check import result

SCHEMA_DIFF = "SchemaDiff.pb"


class AnomaliesFound(RuntimeError):
  """The data does not match its schema."""


def describe(anomalies: anomalies_pb2.Anomalies) -> list:
  """One line per anomaly: the feature, its short description and details."""
  lines = []
  for feature, info in sorted(anomalies.anomaly_info.items()):
    reasons = "; ".join(f"{r.short_description}: {r.description}"
                        for r in info.reason)
    lines.append(f"feature '{feature}': {reasons or info.description}")
  if anomalies.HasField("dataset_anomaly_info"):
    info = anomalies.dataset_anomaly_info
    lines.append("dataset: " + "; ".join(r.description for r in info.reason))
  return lines


def read_anomalies(artifact) -> dict:
  """split -> the Anomalies proto that ExampleValidator wrote for it."""
  result = {}
  for split in standard_artifact_utils.decode_split_names(artifact.split_names):
    path = os.path.join(standard_artifact_utils.get_split_uri([artifact], split),
                        SCHEMA_DIFF)
    result[split] = anomalies_pb2.Anomalies.FromString(
        io_utils.read_bytes_file(path))
  return result


@component
def AnomaliesGate(
    anomalies: InputArtifact[standard_artifacts.ExampleAnomalies],
    image_check: InputArtifact[standard_artifacts.String] = None) -> None:
  """Fails the run when ExampleValidator found anomalies in any split, or
  the image check found a kind that stops it."""
  found = {split: describe(a) for split, a in
           read_anomalies(anomalies).items()}
  found = {split: lines for split, lines in found.items() if lines}
  if found:
    report = "\n".join(f"  split '{split}': {line}"
                       for split, lines in found.items() for line in lines)
    raise AnomaliesFound(
        f"ExampleValidator found anomalies against the schema; the run stops "
        f"before Transform.\n{report}\nAnomalies: {anomalies.uri}")
  if image_check is not None:
    refused = result.refusal(json.loads(image_check.read()))
    if refused:
      raise result.ImagesRefused(refused)

"""DriftGate: the newest span against the span before it, before anything
trains on it.

Runs after StatisticsGen on every run over spans that has an earlier span,
whatever `data.window` is, on both runners and without a resolver (the
open-source Kubeflow backend runs none). Where the earlier span's
statistics come from, in order (pipeline/inputs.py `drift_baseline` says
which apply):
1. this run's StatisticsGen, when the window holds the earlier span too;
2. the statistics an earlier local run computed, found in ML Metadata by
   the local runner (store/metadata/previous_statistics.py);
3. the earlier span's files, read here with TFDV (a Kubeflow run with a
   window of one: its pod has no ML Metadata it may read).

Each declared feature is measured (components/drift_gate/drift.py), and the dataset
size. With `drift.action: stop` a drifted feature fails the run here, one
line per feature, and ExampleValidator, the anomalies gate and Transform
never run; with `warn` the measurements go on to the run's verdict and
report.
"""

import json
import os

import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.io import fileio
from tfx.types import standard_artifact_utils, standard_artifacts
from tfx.utils import io_utils

from components.drift_gate import drift

STATS_FILE = "FeatureStats.pb"  # what StatisticsGen writes in each split folder


class DriftFound(RuntimeError):
  """The newest span has moved too far from the one before it."""


def _split_statistics(artifact, split: str):
  folder = standard_artifact_utils.get_split_uri([artifact], split)
  return tfdv.load_stats_binary(os.path.join(folder, STATS_FILE))


def previous_statistics(baseline: dict, statistics, data_root: str,
                        schema: schema_pb2.Schema):
  """The earlier span's statistics, and where they came from."""
  if baseline["previous_split"]:
    return _split_statistics(statistics, baseline["previous_split"]), "this run's statistics"
  if baseline["previous_statistics"]:
    path = os.path.join(baseline["previous_statistics"], STATS_FILE)
    return tfdv.load_stats_binary(path), f"an earlier run's statistics ({path})"
  files = os.path.join(data_root, baseline["previous_glob"])
  found = tfdv.generate_statistics_from_tfrecord(
      files, stats_options=tfdv.StatsOptions(schema=schema, infer_type_from_schema=True))
  fraction = baseline["train_fraction"]
  if fraction != 1.0:  # the training part of a span split by hash
    dataset = found.datasets[0]
    dataset.num_examples = int(round(dataset.num_examples * fraction))
  return found, f"its files ({files})"


def measure(baseline_json: str, statistics, schema_uri: str, data_root: str,
            rules_json: str) -> dict:
  """{"compared": ..., "measured": [...], "drifted": [lines]}, or a note."""
  baseline = json.loads(baseline_json)
  if not baseline:
    return {"compared": None, "measured": [], "drifted": [],
            "note": "no earlier span to compare with"}
  schema = io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(schema_uri))
  current = _split_statistics(statistics, baseline["newest"])
  previous, source = previous_statistics(baseline, statistics, data_root, schema)
  measured = drift.compare(current, previous, schema, *drift.rules_from_json(rules_json))
  return {"compared": f"{baseline['newest']} against span {baseline['previous_span']}, "
                      f"from {source}",
          "measured": [m.__dict__ for m in measured],
          "drifted": [m.line() for m in measured if m.drifted],
          "distributions": drift.distributions(
              current, previous, [m.feature for m in measured if m.drifted])}


@component
def DriftGate(
    statistics: InputArtifact[
        standard_artifacts.ExampleStatistics],
    schema: InputArtifact[standard_artifacts.Schema],
    drift_baseline: Parameter[str],
    data_root: Parameter[str],
    rules: Parameter[str],
    result: OutputArtifact[standard_artifacts.String]) -> None:
  """Measures the newest span's drift; fails the run if it must stop."""
  found = measure(drift_baseline, statistics, schema.uri, data_root, rules)
  result.value = json.dumps(found, sort_keys=True)
  # Also written beside the output folder, which the local runner deletes
  # when the step fails: the report of a run this stops still shows what was
  # measured (store/report/__init__.py).
  if found["drifted"]:
    execution_folder = os.path.dirname(result.uri)
    with fileio.open(f"{execution_folder}.json", "w") as f:
      f.write(result.value)
  print(f"drift: {found.get('compared') or found.get('note')}", flush=True)
  if found["drifted"] and drift.rules_from_json(rules)[1].action == "stop":
    raise DriftFound(
        f"the newest span drifted from the one before it ({found['compared']}); "
        f"the run stops before Transform (drift.action: stop).\n"
        + "\n".join(f"  {line}" for line in found["drifted"]))

"""The pipeline's data half: ImportExampleGen, StatisticsGen, the schema
(curated or inferred), DriftGate with spans, ExampleValidator, and the gate
that stops a run on anomalies; and what those gates raise."""

import dataclasses
import json
import os
from typing import Any, List, Optional

from tfx.components.example_validator.component import ExampleValidator
from tfx.components.schema_gen.component import SchemaGen
from tfx.proto import example_gen_pb2

from components.anomalies_gate.anomalies_gate import AnomaliesFound, AnomaliesGate
from components.curated_schema.curated_schema import curated_schema
from components.drift_gate.drift import rules_json
from components.drift_gate.drift_gate import DriftFound, DriftGate
from components.image_check import check as check_code
from components.image_check.image_check import ImageCheck
from components.image_check.result import ImagesRefused
from components.import_examples.import_examples import ImportExampleGen
from components.statistics.statistics import StatisticsGen
from dataset import spans
from pipeline.cache_keys import code_fingerprint, image_fingerprints_dir, to_json
from pipeline.config import PipelineConfig
from pipeline.run_parameters import RunParameters, WindowParameters

# What a gate raises to stop a run on its data: a runner says it in a line
# and "no model pushed", not with a traceback.
GATE_STOPS = (AnomaliesFound, DriftFound, ImagesRefused)


@dataclasses.dataclass(frozen=True)
class DataNodes:
  """The data half's nodes, in order (`nodes`), and the ones the model half
  reads by name."""
  nodes: List
  example_gen: Any
  statistics_gen: Any
  schema_gen: Any
  gate: Any
  drift_gate: Optional[Any] = None


def output_config(config: PipelineConfig):
  """ImportExampleGen's output: hash-split unless the data is pre-split.
  Explicit even when empty (keep the input splits): TFX would derive it from
  the input config, which on Kubeflow is a runtime parameter."""
  data = config.declaration.data
  if data.splits:
    return example_gen_pb2.Output()
  return example_gen_pb2.Output(split_config=example_gen_pb2.SplitConfig(splits=[
      example_gen_pb2.SplitConfig.Split(name=name, hash_buckets=buckets)
      for name, buckets in data.hash_buckets.items()]))


def data_components(config: PipelineConfig, run: RunParameters,
                    by_window: WindowParameters) -> DataNodes:
  """ImportExampleGen, StatisticsGen, the schema, ExampleValidator and the
  gate that stops the run on anomalies."""
  decl = config.declaration
  # Reads the TFRecords as they are: plain or GZIP, pre-split or hash-split,
  # each span of the window into splits of its own; pre-split files are
  # copied whole, not re-written (components/import_examples/import_examples.py).
  example_gen = ImportExampleGen(
      input_base=run.data_root,
      input_config=by_window.input_config, output_config=output_config(config))
  if decl.schema:
    # A curated schema from dataset/examples/ is the contract; statistics use it too.
    schema_gen = curated_schema(decl.schema)
    statistics_gen = StatisticsGen(
        examples=example_gen.outputs["examples"],
        schema=schema_gen.outputs["schema"])
  else:
    # Without one, infer it from the training split's statistics.
    statistics_gen = StatisticsGen(
        examples=example_gen.outputs["examples"])
    schema_gen = SchemaGen(
        statistics=statistics_gen.outputs["statistics"], infer_feature_shape=True)
  # Compares every split's statistics with the schema.
  example_validator = ExampleValidator(
      statistics=statistics_gen.outputs["statistics"],
      schema=schema_gen.outputs["schema"])
  # Stops the run on anomalies, and on what the image (or row) check
  # decided stops it: Transform waits for it.
  checks = image_check(config, example_gen, by_window)
  gate = AnomaliesGate(anomalies=example_validator.outputs["anomalies"],
                       image_check=checks[0].outputs["result"] if checks else None)
  if not spans.has_spans(decl.data):
    return DataNodes([example_gen, *checks, statistics_gen, schema_gen, example_validator,
                      gate], example_gen, statistics_gen, schema_gen, gate)
  # With spans: the newest span against the one before, before the schema's
  # check (a renamed category is drift first, an anomaly second).
  drift_gate = DriftGate(
      statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"],
      drift_baseline=by_window.drift_baseline,
      data_root=run.data_root, rules=rules_json(decl))
  example_validator.add_upstream_node(drift_gate)
  return DataNodes([example_gen, *checks, statistics_gen, schema_gen, drift_gate,
                    example_validator, gate], example_gen, statistics_gen, schema_gen, gate,
                   drift_gate)


def image_check(config: PipelineConfig, example_gen, by_window: WindowParameters) -> List:
  """[ImageCheck]: every image of the window's train and eval splits
  fingerprinted and judged, copies across splits and spans included
  (components/image_check/image_check.py); on data without an image
  feature, every row's features hashed and judged the same way (the row
  check, rows.py there: one cheap Beam pass, no thumbnails). The anomalies
  gate fails the run on a kind decided `stop`."""
  decl = config.declaration
  declared = {**decl.contract(), "image_checks": [list(p) for p in decl.image_checks]}
  return [ImageCheck(
      examples=example_gen.outputs["examples"],
      declaration=json.dumps(declared, sort_keys=True),
      train_args=to_json(by_window.train_args), eval_splits=by_window.example_splits,
      cache_dir=image_fingerprints_dir(config) if spans.has_spans(decl.data) else "",
      code=code_fingerprint([os.path.dirname(check_code.__file__)]))]

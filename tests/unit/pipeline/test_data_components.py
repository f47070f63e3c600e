"""pipeline/data_components.py: the data half of the DAG, as
`create_pipeline` builds it for each kind of data layout."""

import dataclasses
import json

from tfx.proto import example_gen_pb2

from dataset import declaration
from pipeline import data_components
from pipeline.config import PipelineConfig
from tests.conftest import build_pipeline, span_declaration


def _upstream(pipeline) -> dict:
  return {c.id: sorted(n.id for n in c.upstream_nodes) for c in pipeline.components}


def test_a_curated_schema_comes_before_the_statistics_that_use_it(tmp_path, digits_decl):
  config = PipelineConfig(pipeline_name="digits", pipeline_root=str(tmp_path / "root"),
                          serving_dir=str(tmp_path / "serving"), declaration=digits_decl)
  upstream = _upstream(build_pipeline(config))
  assert upstream["StatisticsGen"] == ["CuratedSchema", "ImportExampleGen"], upstream
  # The gate reads the anomalies and the image check's findings.
  assert upstream["AnomaliesGate"] == ["ExampleValidator", "ImageCheck"], upstream
  assert "SchemaGen" not in upstream and "DriftGate" not in upstream, upstream
  assert data_components.output_config(config) == example_gen_pb2.Output()


def test_with_spans_drift_is_judged_before_the_schemas_check(tmp_path):
  path, _ = span_declaration(tmp_path)
  config = PipelineConfig(pipeline_name="spans", pipeline_root=str(tmp_path / "root"),
                          serving_dir=str(tmp_path / "serving"),
                          declaration=declaration.load(str(path)))
  upstream = _upstream(build_pipeline(config))
  assert "DriftGate" in upstream["ExampleValidator"], upstream
  # And ServedScore: the served model scored on the newest span before a gate can stop.
  assert upstream["DriftGate"] == ["CuratedSchema", "ServedScore", "StatisticsGen"], upstream


def _image_check(config: PipelineConfig):
  return next(c for c in build_pipeline(config).components if c.id == "ImageCheck")


def test_the_image_check_reads_the_windows_splits_and_the_declared_decisions(tmp_path,
                                                                             digits_decl):
  decl = dataclasses.replace(digits_decl, image_checks=(("dark", "stop"), ("leak", "warn")))
  props = _image_check(PipelineConfig(
      pipeline_name="digits", pipeline_root=str(tmp_path / "root"),
      serving_dir=str(tmp_path / "serving"), declaration=decl)).exec_properties
  assert json.loads(props["train_args"])["splits"] == ["train"], props
  assert json.loads(props["eval_splits"]) == ["eval"], props
  declared = declaration.Declaration.from_dict(json.loads(props["declaration"]))
  assert declared.image_checks == (("dark", "stop"), ("leak", "warn")), declared.image_checks
  assert declared.data.root == "" and props["cache_dir"] == "", props  # no spans, no cache


def test_over_spans_the_image_check_keeps_fingerprints_under_the_pipeline_root(tmp_path):
  path, _ = span_declaration(tmp_path, spans=(1, 2), window=2)
  props = _image_check(PipelineConfig(
      pipeline_name="spans", pipeline_root=str(tmp_path / "root"),
      serving_dir=str(tmp_path / "serving"),
      declaration=declaration.load(str(path)))).exec_properties
  assert props["cache_dir"] == f"{tmp_path}/root/image_fingerprints/spans", props
  assert json.loads(props["train_args"])["splits"] == ["train_span1", "train_span2"], props


def test_data_without_an_image_gets_the_row_check_before_the_gate(tmp_path, digits_decl):
  plain = dataclasses.replace(digits_decl, features=tuple(
      f for f in digits_decl.features if f.kind != "image"), image_checks=(("leak", "warn"),))
  config = PipelineConfig(pipeline_name="digits", pipeline_root=str(tmp_path / "root"),
                          serving_dir=str(tmp_path / "serving"), declaration=plain)
  nodes = {c.id: c for c in build_pipeline(config).components}
  assert nodes["ImageCheck"] in nodes["AnomaliesGate"].upstream_nodes
  declared = declaration.Declaration.from_dict(json.loads(
      nodes["ImageCheck"].exec_properties["declaration"]))
  assert not declared.of_kind("image") and declared.image_checks == (("leak", "warn"),)

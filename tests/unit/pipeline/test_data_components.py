"""pipeline/data_components.py: the data half of the DAG, as
`create_pipeline` builds it for each kind of data layout."""

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
  assert upstream["AnomaliesGate"] == ["ExampleValidator"], upstream
  assert "SchemaGen" not in upstream and "DriftGate" not in upstream, upstream
  assert data_components.output_config(config) == example_gen_pb2.Output()


def test_with_spans_drift_is_judged_before_the_schemas_check(tmp_path):
  path, _ = span_declaration(tmp_path)
  config = PipelineConfig(pipeline_name="spans", pipeline_root=str(tmp_path / "root"),
                          serving_dir=str(tmp_path / "serving"),
                          declaration=declaration.load(str(path)))
  upstream = _upstream(build_pipeline(config))
  assert "DriftGate" in upstream["ExampleValidator"], upstream
  assert upstream["DriftGate"] == ["CuratedSchema", "StatisticsGen"], upstream

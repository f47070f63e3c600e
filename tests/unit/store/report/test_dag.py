"""The report's DAG layout (store/report/dag.py): every component below what it reads."""



from dataset import declaration
from pipeline import config as pipeline_config
from store.report import dag
from tests.conftest import DIGITS_YAML, build_pipeline


def test_dag_layout_puts_every_component_below_what_it_reads():
  decl = declaration.load(DIGITS_YAML)
  config = pipeline_config.PipelineConfig(
      pipeline_name="digits", pipeline_root="/tmp/root", serving_dir="/tmp/serving",
      declaration=decl)
  upstream = {c.id: [u.id for u in c.upstream_nodes]
              for c in build_pipeline(config).components}
  at = dag.layout(upstream)
  assert set(at) == set(upstream)
  for node, parents in upstream.items():
    for parent in parents:
      assert at[parent][0] < at[node][0], (parent, node, at)
  assert len(set(at.values())) == len(at), f"two components share a place: {at}"

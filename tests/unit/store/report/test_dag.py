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
  # As high as it can go: a row below its lowest parent, a source on the top
  # row; a row's components side by side from the left, in pipeline order.
  for node, parents in upstream.items():
    assert at[node][0] == 1 + max((at[p][0] for p in parents), default=-1), (node, at)
  for row in {r for r, _ in at.values()}:
    assert [p for node, (r, p) in at.items() if r == row] == list(range(
        sum(r == row for r, _ in at.values()))), (row, at)
  assert sum(r == 0 for r, _ in at.values()) >= 2, f"expected the sources side by side: {at}"

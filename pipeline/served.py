"""The steps about the served model, and where they go: with spans,
ServedScore scores it on the newest span before DriftGate and
AnomaliesGate, so a run they stop still records it
(components/served_score/); with `--kserve`, KServeDeploy points the
InferenceService at the newest version after the Pusher
(components/kserve_deploy/)."""

import dataclasses
import json

from google.protobuf import json_format

from components.evaluator.eval_config import eval_config
from components.kserve_deploy.kserve_deploy import KServeDeploy, target_json
from components.served_score.served_score import ServedScore
from dataset import spans
from pipeline.config import PipelineConfig
from pipeline.data_components import DataNodes
from pipeline.run_parameters import RunParameters


def add_served_steps(config: PipelineConfig, run: RunParameters, data: DataNodes,
                     nodes: list) -> None:
  """Adds ServedScore and KServeDeploy to `nodes` (the Pusher last), if asked."""
  if config.kserve:  # after the Pusher (nodes[-1]): the newest version on KServe
    nodes.append(KServeDeploy(pushed_model=nodes[-1].outputs["pushed_model"],
                              serving_dir=run.serving_dir, target=target_json(config.kserve)))
  if not spans.has_spans(config.declaration.data):
    return
  baseline = next(n for n in nodes if n.id == "BaselineModel")
  served = ServedScore(examples=data.example_gen.outputs["examples"],
                       model=baseline.outputs["model"],
                       eval_config=json_format.MessageToJson(
                           eval_config(config.declaration, config.evaluation),
                           preserving_proto_field_name=True),
                       rules=json.dumps(dataclasses.asdict(config.evaluation), sort_keys=True),
                       serving_dir=run.serving_dir)
  for gate in (data.gate, data.drift_gate):
    if gate is not None:
      gate.add_upstream_node(served)
  nodes.insert(nodes.index(baseline) + 1, served)

"""Runs written into a SQLite ML Metadata store as TFX's launcher records them
(a `pipeline_run` context under the pipeline's, each execution in its node's
context `<pipeline>.<node>`, each output an OUTPUT event under its key), for
the tests of what reads them (store/metadata/, commands/debug/) without a
pipeline run."""

import json
import os

import ml_metadata as mlmd
from ml_metadata.proto import metadata_store_pb2 as pb

from components.serving_check.check import RESULT_FILE
from store.metadata import run_record
from store.metadata import store as st

SERVING_REASON = "json: serving_default takes mean_radius, expected 'mean radius'"


class Runs:
  """Runs of one pipeline written into a new SQLite store, as TFX records them."""

  def __init__(self, folder, pipeline: str = "wine"):
    self.folder, self.pipeline = str(folder), pipeline
    self.path = os.path.join(self.folder, pipeline, "metadata.sqlite")
    os.makedirs(os.path.dirname(self.path))
    config = pb.ConnectionConfig()
    config.sqlite.filename_uri = self.path
    config.sqlite.connection_mode = pb.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    self.store = mlmd.MetadataStore(config)
    self.types = {name: self.store.put_context_type(pb.ContextType(name=name))
                  for name in ("pipeline", "pipeline_run", "node")}
    [self.pipeline_id] = self.store.put_contexts(
        [pb.Context(type_id=self.types["pipeline"], name=pipeline)])
    self.nodes = {}

  def run(self, run_id: str, *steps) -> None:
    """steps: (node, state, {output key: (artifact type, custom properties,
    and `split_names` for a type with splits)})."""
    [run] = self.store.put_contexts([pb.Context(type_id=self.types["pipeline_run"],
                                                name=run_id)])
    self.store.put_parent_contexts([pb.ParentContext(child_id=run, parent_id=self.pipeline_id)])
    for node, state, outputs in steps:
      execution = pb.Execution(
          type_id=self.store.put_execution_type(pb.ExecutionType(name=f"tfx.{node}")),
          last_known_state=getattr(pb.Execution, state))
      produced = []
      for key, (type_name, props) in outputs.items():
        uri = os.path.join(self.folder, self.pipeline, "pipeline_root", node, key, run_id)
        os.makedirs(uri)
        # TFX declares `split_names` on the types with splits (a property of
        # the type, not a custom one): `"[\"train\", \"eval\"]"`.
        typed = {"split_names": pb.STRING} if "split_names" in props else {}
        artifact = pb.Artifact(
            type_id=self.store.put_artifact_type(pb.ArtifactType(name=type_name,
                                                                 properties=typed)),
            uri=uri, state=pb.Artifact.LIVE)
        if typed:
          artifact.properties["split_names"].string_value = props["split_names"]
        for name, value in ((n, v) for n, v in props.items() if n != "split_names"):
          artifact.custom_properties[name].MergeFrom(
              pb.Value(int_value=value) if isinstance(value, int) else pb.Value(string_value=value))
        event = pb.Event(type=pb.Event.OUTPUT)
        event.path.steps.add().key = key
        event.path.steps.add().index = 0
        produced.append((artifact, event))
      self.store.put_execution(execution, produced,
                               self.store.get_contexts_by_id([self._node(node), run]))

  def _node(self, node: str) -> int:
    if node not in self.nodes:
      [self.nodes[node]] = self.store.put_contexts(
          [pb.Context(type_id=self.types["node"], name=f"{self.pipeline}.{node}")])
    return self.nodes[node]

  def record(self, index: int = -1) -> run_record.RunRecord:
    store = st.open_store(self.path)
    run = st.runs(store, self.pipeline)[index]
    return run_record.from_store(store, self.pipeline, run, {})


def serving_check_failed(runs: Runs, run_id: str) -> None:
  """A blessed model whose serving check failed: every step COMPLETE, nothing pushed."""
  runs.run(run_id, ("Trainer", "COMPLETE", {"model": ("Model", {})}),
           ("Evaluator", "COMPLETE", {"blessing": ("ModelBlessing", {"blessed": 1})}),
           ("ServingCheck", "COMPLETE", {"infra_blessing": (
               "InfraBlessing", {"blessed": 0, "checked": 1, "reason": SERVING_REASON})}),
           ("Pusher", "COMPLETE", {"pushed_model": ("PushedModel", {"pushed": 0})}))
  uri = runs.record().uri("ServingCheck", "infra_blessing")
  with open(os.path.join(uri, RESULT_FILE), "w") as f:
    json.dump({"passed": False, "reason": SERVING_REASON, "examples": 64, "load_seconds": 1.0,
               "checks": [{"name": "loads", "ok": True, "detail": ""},
                          {"name": "json", "ok": False, "detail": SERVING_REASON}]}, f)

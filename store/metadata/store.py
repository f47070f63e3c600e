"""Runs of one pipeline, read from its ML Metadata store (read-only).

TFX records each run as a `pipeline_run` context whose parents include the
pipeline's context; each component's execution in that run is attributed to
the run, to the pipeline and to the node's own context (`<pipeline>.<node>`).
A partial run also records the run it reused as a parent, and re-publishes
the reused components' outputs as CACHED executions of the new run.
"""

import dataclasses
import datetime
import os
from typing import Dict, List, Optional

import ml_metadata as mlmd
from ml_metadata.proto import metadata_store_pb2

STATE = metadata_store_pb2.Execution.State
OUTPUTS = (metadata_store_pb2.Event.OUTPUT, metadata_store_pb2.Event.DECLARED_OUTPUT)
INPUTS = (metadata_store_pb2.Event.INPUT, metadata_store_pb2.Event.DECLARED_INPUT)


class StoreError(Exception):
  """The metadata file is missing, unreadable, or not this pipeline's."""


@dataclasses.dataclass
class NodeRun:
  """One component's execution in a run."""
  node: str
  execution: metadata_store_pb2.Execution

  @property
  def state(self) -> str:
    return STATE.Name(self.execution.last_known_state)

  @property
  def seconds(self) -> float:
    """From its creation to its last update, as ML Metadata recorded them."""
    return (self.execution.last_update_time_since_epoch
            - self.execution.create_time_since_epoch) / 1000


@dataclasses.dataclass
class Run:
  """One pipeline run; `nodes` in the order they ran."""
  id: str
  context_id: int
  started: datetime.datetime
  nodes: Dict[str, NodeRun]
  parent: Optional[str] = None  # the run a partial run reused
  # What the run did is its Outcome's `state` (store/metadata/outcome.py),
  # not a summary of its steps' states: every step of a run whose serving
  # check failed is COMPLETE.


def open_store(path: str, writable: bool = False) -> mlmd.MetadataStore:
  """Opens the SQLite store at `path`, read-only unless `writable` (for
  store/retention/, which marks the artifacts it deletes).

  Raises:
    StoreError: it does not exist, or is not an ML Metadata store.
  """
  if not os.path.isfile(path):
    raise StoreError(
        f"{path}: no such file; expected the ML Metadata store that local_runner.py "
        "writes to <output-dir>/<pipeline>/metadata.sqlite (run the pipeline first, "
        "or name the file with --metadata)")
  config = metadata_store_pb2.ConnectionConfig()
  config.sqlite.filename_uri = path
  config.sqlite.connection_mode = (
      metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE if writable
      else metadata_store_pb2.SqliteMetadataSourceConfig.READONLY)
  try:
    store = mlmd.MetadataStore(config)
    store.get_context_types()
  except Exception as e:  # noqa: BLE001  (MLMD raises its own errors, or a bare RuntimeError)
    raise StoreError(f"{path}: expected an ML Metadata SQLite store, found a file "
                     f"it cannot read ({type(e).__name__}: {str(e).split(' query:')[0]})") from None
  return store


def pipeline_names(store: mlmd.MetadataStore) -> List[str]:
  return sorted(c.name for c in store.get_contexts_by_type("pipeline"))


def check_pipeline(store: mlmd.MetadataStore, path: str, pipeline: str) -> None:
  """Raises StoreError unless the store holds runs of `pipeline`."""
  names = pipeline_names(store)
  if pipeline not in names:
    found = ", ".join(repr(n) for n in names) or "no pipeline at all"
    raise StoreError(f"{path}: expected the runs of pipeline {pipeline!r}, found {found}")


def runs(store: mlmd.MetadataStore, pipeline: str) -> List[Run]:
  """Every run of `pipeline`, oldest first."""
  found = []
  run_contexts = {c.id: c for c in store.get_contexts_by_type("pipeline_run")}
  if not run_contexts:
    return []
  for context in run_contexts.values():
    parents = store.get_parent_contexts_by_context(context.id)
    if not any(p.name == pipeline and p.id not in run_contexts for p in parents):
      continue
    parent_runs = [p.name for p in parents if p.id in run_contexts]
    run = Run(id=context.name, context_id=context.id,
              started=datetime.datetime.fromtimestamp(context.create_time_since_epoch / 1000),
              nodes={}, parent=parent_runs[0] if parent_runs else None)
    executions = sorted(store.get_executions_by_context(context.id), key=lambda e: e.id)
    for execution in executions:
      node = node_of(store, execution.id, pipeline)
      if node:
        run.nodes[node] = NodeRun(node, execution)
    found.append(run)
  return sorted(found, key=lambda r: (r.started, r.context_id))


def find_run(store: mlmd.MetadataStore, pipeline: str, run_id: Optional[str]) -> Run:
  """The run named run_id (a unique prefix will do), or the latest.

  Raises:
    StoreError: no runs, or no run matches.
  """
  all_runs = runs(store, pipeline)
  if not all_runs:
    raise StoreError(f"pipeline {pipeline!r} has no runs recorded yet")
  if run_id is None:
    return all_runs[-1]
  matches = [r for r in all_runs if r.id.startswith(run_id)]
  if len(matches) != 1:
    listed = ", ".join(r.id for r in all_runs[-5:])
    raise StoreError(f"run {run_id!r}: expected one matching run id, found "
                     f"{len(matches)}; the latest runs are {listed}")
  return matches[0]


def node_of(store: mlmd.MetadataStore, execution_id: int,
            pipeline: Optional[str] = None) -> Optional[str]:
  """The component an execution belongs to (of `pipeline`, if given), or None."""
  node_type = store.get_context_type("node").id
  for context in store.get_contexts_by_execution(execution_id):
    owner, _, node = context.name.partition(".")
    if context.type_id == node_type and node and pipeline in (None, owner):
      return node
  return None


def latest_execution(store: mlmd.MetadataStore, pipeline: str,
                     node: str) -> Optional[metadata_store_pb2.Execution]:
  """The node's newest execution in any run, or None: one context's read."""
  context = store.get_context_by_type_and_name("node", f"{pipeline}.{node}")
  executions = store.get_executions_by_context(context.id) if context else []
  return max(executions, key=lambda e: e.id, default=None)


def artifact_type(store: mlmd.MetadataStore, artifact: metadata_store_pb2.Artifact) -> str:
  return store.get_artifact_types_by_id([artifact.type_id])[0].name


def events(store: mlmd.MetadataStore, execution_id: int, kinds) -> List[tuple]:
  """(key, artifact) for the execution's events of the given kinds."""
  found = [(e.path.steps[0].key if e.path.steps else "", e.artifact_id)
           for e in store.get_events_by_execution_ids([execution_id]) if e.type in kinds]
  by_id = {a.id: a for a in store.get_artifacts_by_id([a for _, a in found])}
  return [(key, by_id[artifact_id]) for key, artifact_id in found]


def producer(store: mlmd.MetadataStore, artifact_id: int) -> Optional[metadata_store_pb2.Execution]:
  """The execution that wrote the artifact (not a later CACHED reuse of it)."""
  ids = [e.execution_id for e in store.get_events_by_artifact_ids([artifact_id])
         if e.type in OUTPUTS]
  if not ids:
    return None
  executions = store.get_executions_by_id(ids)
  real = [e for e in executions if e.last_known_state != STATE.CACHED] or executions
  return min(real, key=lambda e: e.id)


def outputs(store: mlmd.MetadataStore, run: Run, node: str) -> Dict[str, list]:
  """key -> artifacts that `node` output (or, when cached, reused) in `run`."""
  if node not in run.nodes:
    return {}
  found: Dict[str, list] = {}
  for key, artifact in events(store, run.nodes[node].execution.id, OUTPUTS):
    found.setdefault(key, []).append(artifact)
  return found


def output(store: mlmd.MetadataStore, run: Run, node: str, key: str):
  """The single artifact `node` output under `key` in `run`, or None."""
  artifacts = outputs(store, run, node).get(key)
  return artifacts[0] if artifacts else None


def split_uris(store: mlmd.MetadataStore, artifact) -> Dict[str, str]:
  """split -> its folder, for an artifact with splits (Examples, statistics,
  anomalies), by TFX's own rules; empty for None."""
  if artifact is None:
    return {}
  from tfx.types import artifact_utils, standard_artifact_utils
  [artifact_type] = store.get_artifact_types_by_id([artifact.type_id])
  tfx_artifact = artifact_utils.deserialize_artifact(artifact_type, artifact)
  return {split: standard_artifact_utils.get_split_uri([tfx_artifact], split)
          for split in standard_artifact_utils.decode_split_names(tfx_artifact.split_names)}


def exec_property(execution: metadata_store_pb2.Execution, name: str) -> Optional[str]:
  """A string execution property (TFX keeps them as custom properties)."""
  for props in (execution.custom_properties, execution.properties):
    if name in props:
      return props[name].string_value
  return None


def declaration(store: mlmd.MetadataStore, run: Run):
  """The dataset declaration (dataset.types.Declaration) as the run's
  Transform or Trainer ran with it; None when neither ran."""
  import json

  from dataset.types import Declaration
  for node in ("Transform", "Trainer"):
    if node in run.nodes:
      config = exec_property(run.nodes[node].execution, "custom_config")
      if config:
        return Declaration.from_dict(json.loads(config)["declaration"])
  return None

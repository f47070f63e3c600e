"""What retention would delete, and why the rest stays (see __init__)."""

import dataclasses
import json
import os
from typing import List, Set

from ml_metadata.proto import metadata_store_pb2

import serving
from dataset import spans
from runtime import storage
from store.metadata import store as st

LIVE, DELETED = metadata_store_pb2.Artifact.LIVE, metadata_store_pb2.Artifact.DELETED


@dataclasses.dataclass
class Doomed:
  """One thing to delete: an artifact (its ML Metadata id) or an analyzer
  cache entry (id None)."""
  what: str  # "Trainer model", "analyzer cache train_span1"
  uri: str
  bytes: int
  run: str = ""
  artifact_id: int = 0


@dataclasses.dataclass
class Plan:
  kept_runs: List[str]
  older_runs: List[str]
  versions: List[str]  # the served versions whose lineage stays
  kept_spans: List[str]  # analyzer cache entries that stay
  doomed: List[Doomed]
  skipped_outside: int = 0  # artifacts of older runs outside the pipeline root

  @property
  def total_bytes(self) -> int:
    return sum(d.bytes for d in self.doomed)


def size_of(uri: str) -> int:
  """Bytes under a folder or in a file (0 if gone)."""
  gfile = storage.gfile()
  if not gfile.exists(uri):
    return 0
  if not gfile.isdir(uri):
    return gfile.stat(uri).length
  return sum(gfile.stat(os.path.join(folder, name)).length
             for folder, _, files in gfile.walk(uri) for name in files)


def _events(store, execution_ids) -> List[metadata_store_pb2.Event]:
  return store.get_events_by_execution_ids(list(execution_ids)) if execution_ids else []


def used_by(store, runs: List[st.Run]) -> Set[int]:
  """Artifact ids any execution of these runs read or wrote (a partial run's
  reused outputs included: it records them as its own CACHED executions)."""
  executions = [e.id for run in runs for e in store.get_executions_by_context(run.context_id)]
  return {e.artifact_id for e in _events(store, executions)}


def _producers(store, artifact_ids) -> Set[int]:
  if not artifact_ids:
    return set()
  return {e.execution_id for e in store.get_events_by_artifact_ids(list(artifact_ids))
          if e.type in st.OUTPUTS}


def lineage(store, version_dirs: List[str]) -> Set[int]:
  """Artifact ids the served versions need: each Pusher execution that
  pushed one (or found it already pushed), its inputs and outputs, what the steps
  that wrote them read and wrote; then what those inputs' own writers wrote
  (the transform graph's Transform, the examples' import). Not further:
  an earlier run's artifacts stay only as far as they are inputs here."""
  wanted = {os.path.normpath(v) for v in version_dirs}
  pushers = set()
  for artifact in store.get_artifacts_by_type("PushedModel"):
    where = artifact.custom_properties.get("pushed_destination")
    if where is not None and os.path.normpath(where.string_value) in wanted:
      pushers |= _producers(store, [artifact.id])
  pushed = _events(store, pushers)  # the PushedModel and the card too
  needed = {e.artifact_id for e in pushed}
  writers = _producers(store, {e.artifact_id for e in pushed if e.type in st.INPUTS})
  level1 = _events(store, writers)
  needed |= {e.artifact_id for e in level1}
  inputs1 = {e.artifact_id for e in level1 if e.type in st.INPUTS}
  needed |= {e.artifact_id for e in _events(store, _producers(store, inputs1))
             if e.type in st.OUTPUTS}
  return needed


def _node_and_key(store, artifact_id: int) -> str:
  for event in store.get_events_by_artifact_ids([artifact_id]):
    if event.type in st.OUTPUTS and event.path.steps:
      node = st.node_of(store, event.execution_id) or "?"
      return f"{node} {event.path.steps[0].key}"
  return "artifact"


def _kept_spans(store, runs: List[st.Run]) -> Set[str]:
  """The span splits (`train_span3`) the runs' imported examples hold."""
  found = set()
  for run in runs:
    examples = st.output(store, run, "ImportExampleGen", "examples")
    if examples is not None and "split_names" in examples.properties:
      found |= set(json.loads(examples.properties["split_names"].string_value))
  return {s for s in found if spans.is_span_split(s)}


def plan(store, pipeline: str, keep: int, pipeline_root: str, serving_dir: str) -> Plan:
  """What deleting the artifacts of all but the newest `keep` runs means."""
  runs = st.runs(store, pipeline)
  kept, older = runs[-keep:] if keep else [], runs[:-keep] if keep else runs
  versions = serving.versions(serving_dir)
  keep_ids = used_by(store, kept) | lineage(store, versions)
  root = pipeline_root.rstrip("/") + "/"
  result = Plan([r.id for r in kept], [r.id for r in older],
                [os.path.basename(v) for v in versions],
                sorted(_kept_spans(store, kept)), [])
  run_of = {}
  for run in older:
    for artifact_id in used_by(store, [run]):
      run_of.setdefault(artifact_id, run.id)
  candidates = store.get_artifacts_by_id(sorted(set(run_of) - keep_ids))
  for artifact in candidates:
    if artifact.state != LIVE:
      continue
    if not artifact.uri.startswith(root):
      result.skipped_outside += 1
      continue
    result.doomed.append(Doomed(_node_and_key(store, artifact.id), artifact.uri,
                                size_of(artifact.uri), run_of[artifact.id], artifact.id))
  result.doomed += span_cache_entries(root, pipeline, set(result.kept_spans))
  return result


# Folders under the pipeline root that a pipeline's runs share, an entry per
# span split (pipeline/cache_keys.py): Transform's analyzer cache and the
# image check's fingerprints.
SPAN_CACHES = ("analyzer_cache", "image_fingerprints")


def span_cache_entries(root: str, pipeline: str, kept_spans: Set[str]) -> List[Doomed]:
  """The shared caches' entries of spans no kept run read."""
  return [doomed for cache in SPAN_CACHES for doomed in cache_entries(
      f"{root.rstrip('/')}/{cache}/{pipeline}", kept_spans, cache.replace("_", " "))]


def cache_entries(cache_dir: str, kept_spans: Set[str],
                  what: str = "analyzer cache") -> List[Doomed]:
  """A shared cache's entries of spans no kept run read."""
  gfile = storage.gfile()
  if not kept_spans or not gfile.isdir(cache_dir):
    return []  # without spans, the cache is not written (components/transform/transform.py)
  doomed = []
  for name in sorted(n.rstrip("/") for n in gfile.listdir(cache_dir)):
    path = f"{cache_dir}/{name}"
    if spans.is_span_split(name) and name not in kept_spans and gfile.isdir(path):
      doomed.append(Doomed(f"{what} {name}", path, size_of(path)))
  return doomed


def carry_out(store, doomed: List[Doomed]) -> None:
  """Marks the artifacts DELETED in ML Metadata (`store` opened writable),
  then deletes their files, and the cache entries'."""
  artifacts = store.get_artifacts_by_id([d.artifact_id for d in doomed if d.artifact_id])
  for artifact in artifacts:
    artifact.state = DELETED
  if artifacts:
    store.put_artifacts(artifacts)
  gfile = storage.gfile()
  for item in doomed:
    if gfile.isdir(item.uri):
      gfile.rmtree(item.uri)
    elif gfile.exists(item.uri):
      gfile.remove(item.uri)

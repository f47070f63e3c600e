"""What each component of a run read and wrote, one line per artifact."""

import dataclasses
from typing import List, Optional

import ml_metadata as mlmd
from ml_metadata.proto import metadata_store_pb2

from store.metadata import store as st


@dataclasses.dataclass
class ArtifactLine:
  node: str
  direction: str  # "in" or "out"
  key: str
  type: str
  uri: str
  details: str  # span, version, blessing, push: whatever the artifact carries


def details(artifact: metadata_store_pb2.Artifact) -> str:
  """The facts worth a glance: span/version, blessed or not, pushed where."""
  custom = artifact.custom_properties
  parts = []
  for name in ("span", "version"):  # TFX keeps them as custom properties
    if name in custom:
      parts.append(f"{name} {custom[name].int_value}")
  if "blessed" in custom:
    parts.append("blessed" if custom["blessed"].int_value else "NOT blessed")
  if "pushed" in custom:
    parts.append(f"pushed to {custom['pushed_destination'].string_value}"
                 if custom["pushed"].int_value else "not pushed")
  if "source_model" in custom:
    source = custom["source_model"].string_value
    parts.append(f"baseline {source}" if source else "no baseline yet")
  if "search" in custom:  # the Tuner's outputs: which search, its best score
    parts.append(f"search {custom['search'].string_value}, best "
                 f"{custom['best_score'].double_value:.4f}"
                 + (f": {custom['values'].string_value}" if "values" in custom else ""))
  if artifact.state == metadata_store_pb2.Artifact.DELETED:
    parts.append("deleted by retention")
  return ", ".join(parts)


def artifact_lines(store: mlmd.MetadataStore, run: st.Run,
                   node: Optional[str] = None) -> List[ArtifactLine]:
  """Inputs, then outputs, of each component of the run (or of `node`).

  Raises:
    StoreError: `node` did not run in this run.
  """
  if node is not None and node not in run.nodes:
    raise st.StoreError(f"{node!r} did not run in run {run.id}; it ran "
                        f"{', '.join(run.nodes) or 'nothing'}")
  lines = []
  for name, node_run in run.nodes.items():
    if node is not None and name != node:
      continue
    for direction, kinds in (("in", st.INPUTS), ("out", st.OUTPUTS)):
      for key, artifact in st.events(store, node_run.execution.id, kinds):
        lines.append(ArtifactLine(name, direction, key, st.artifact_type(store, artifact),
                                  artifact.uri, details(artifact)))
  return lines

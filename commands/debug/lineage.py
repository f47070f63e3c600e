"""The chain that produced a pushed model, walked back through ML Metadata.

From the Pusher's output, each artifact's producing execution and that
execution's inputs, back to the imported examples: which examples and spans,
which schema, which transform graph, which evaluation blessed the model and
against which baseline. An artifact met twice is printed once.
"""

from typing import List, Optional

import ml_metadata as mlmd

from commands.debug.artifacts import details
from store.metadata import store as st


def pushed_models(store: mlmd.MetadataStore, pipeline: str):
  """The PushedModel artifacts that were really pushed, oldest first."""
  found = []
  for run in st.runs(store, pipeline):
    pusher = run.nodes.get("Pusher")
    if pusher is None or pusher.execution.last_known_state == st.STATE.CACHED:
      continue
    for _, artifact in st.events(store, pusher.execution.id, st.OUTPUTS):
      if artifact.custom_properties["pushed"].int_value:
        found.append(artifact)
  return found


def lineage(store: mlmd.MetadataStore, pipeline: str,
            model: Optional[str] = None) -> List[str]:
  """Indented lines: the pushed model (the latest, or the one whose
  destination or version contains `model`), then what produced it.

  Raises:
    StoreError: nothing was pushed, or nothing matches `model`.
  """
  pushed = pushed_models(store, pipeline)
  if model is not None:
    pushed = [a for a in pushed
              if model in a.custom_properties["pushed_destination"].string_value]
  if not pushed:
    what = f"a pushed model matching {model!r}" if model else "a pushed model"
    raise st.StoreError(f"pipeline {pipeline!r}: expected {what}, found none")
  artifact = pushed[-1]
  lines = [f"pushed model {artifact.custom_properties['pushed_destination'].string_value}"]
  _walk(store, artifact.id, depth=1, seen=set(), lines=lines)
  return lines


def _walk(store, artifact_id: int, depth: int, seen: set, lines: List[str]) -> None:
  execution = st.producer(store, artifact_id)
  if execution is None:
    return
  node = st.node_of(store, execution.id) or f"execution type {execution.type_id}"
  pad = "  " * depth
  inputs = st.events(store, execution.id, st.INPUTS)
  source = execution.custom_properties.get("input_base")
  lines.append(f"{pad}made by {node} (execution {execution.id})"
               + (f" reading {source.string_value}" if source else "")
               + (" from:" if inputs else ""))
  for key, artifact in inputs:
    facts = details(artifact)
    again = artifact.id in seen
    lines.append(f"{pad}  {key}: {st.artifact_type(store, artifact)} {artifact.uri}"
                 + (f" ({facts})" if facts else "") + (" (see above)" if again else ""))
    if not again:
      seen.add(artifact.id)
      _walk(store, artifact.id, depth + 2, seen, lines)


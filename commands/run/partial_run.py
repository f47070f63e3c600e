"""Partial runs (`--from-node`, `--to-node`) that never judge against stale state.

TFX's partial run reuses the latest outputs of every node it does not run
but needs, including what those nodes resolved from live state when they
last ran: the served version (BaselineModel), the hyperparameter search
(the Tuner), the span window (ImportExampleGen) and the drift baseline
(DriftGate). Reused blindly, a BaselineModel output from before the last
push says "nothing served", and the Evaluator blesses a worse model over
the served one (measured: 0.9628 pushed over 0.9938).

So each reused node that reads live state is compared with what this run
resolved (the node's execution properties in ML Metadata against the ones
the pipeline now gives it):
- BaselineModel and the Tuner are cheap to re-run (a copy; a cache hit
  unless the search changed), so a stale one joins the run;
- a stale window or drift baseline would need the data components again,
  which is a whole run: the partial run is refused, in one line.
"""

import os
from typing import Dict, List, Optional, Sequence

from google.protobuf import json_format

# node -> the execution properties it resolves from live state.
LIVE = {
    "BaselineModel": ("served_version", "training_key"),
    "Tuner": ("search",),
    "ImportExampleGen": ("input_config",),
    "DriftGate": ("drift_baseline",),
}
RERUN = ("BaselineModel", "Tuner")  # cheap: re-run when stale


class PartialRunError(ValueError):
  """A partial run that cannot be run as asked; one line saying why."""


def reused_nodes(upstream: Dict[str, set], from_nodes: Optional[Sequence[str]],
                 to_nodes: Optional[Sequence[str]]) -> List[str]:
  """The nodes a partial run does not run but takes outputs from: the
  ancestors of the nodes it runs (downstream of `from_nodes` and upstream of
  `to_nodes`), as TFX's partial run computes them.

  Args:
    upstream: node id -> the ids of its upstream nodes, in pipeline order.
  """
  downstream = {node: {n for n, ups in upstream.items() if node in ups} for node in upstream}

  def closure(start, edges):
    seen, todo = set(start), list(start)
    while todo:
      for nxt in edges[todo.pop()] - seen:
        seen.add(nxt)
        todo.append(nxt)
    return seen

  to_run = (closure(from_nodes or list(upstream), downstream)
            & closure(to_nodes or list(upstream), upstream))
  return [n for n in upstream if n in closure(to_run, upstream) - to_run]


def _same(stored: Optional[str], value) -> bool:
  """Whether an execution property as ML Metadata stored it equals `value`
  as this run's pipeline gives it (a string, or a proto stored as JSON)."""
  if stored is None:
    return False
  if isinstance(value, str):
    return stored == value
  try:
    return json_format.Parse(stored, type(value)()) == value
  except json_format.ParseError:
    return False


def stale_properties(store, component, execution) -> List[str]:
  """The live-state properties whose value `execution` ran with differs
  from what `component` is given now. A CACHED execution records no
  properties: its outputs' producer ran with the values they hold."""
  from store.metadata import store as st
  if execution.last_known_state == st.STATE.CACHED:
    produced = st.events(store, execution.id, st.OUTPUTS)
    execution = (produced and st.producer(store, produced[0][1].id)) or execution
  return [name for name in LIVE.get(component.id, ())
          if name in component.exec_properties
          and not _same(st.exec_property(execution, name), component.exec_properties[name])]


def plan(pipeline, from_nodes, to_nodes, metadata_path: str):
  """RunOptions for a partial run, or None for a whole one.

  Returns:
    (RunOptions or None, the nodes added because their live state moved:
    a list of "Node (property, ...)" for the run's notes).

  Raises:
    PartialRunError: an unknown node (listing the pipeline's nodes); a
      reused node no earlier run completed; a reused window or drift
      baseline that is no longer this run's.
  """
  from tfx.orchestration.pipeline import RunOptions

  from store.metadata import store as st
  if not (from_nodes or to_nodes):
    return None, []
  components = {c.id: c for c in pipeline.components}
  for flag, nodes in (("--from-node", from_nodes), ("--to-node", to_nodes)):
    for node in nodes or ():
      if node not in components:
        raise PartialRunError(f"{flag}: expected one of {', '.join(components)}, "
                              f"found {node!r}")
  name = pipeline.pipeline_info.pipeline_name
  upstream = {c.id: {u.id for u in c.upstream_nodes} for c in pipeline.components}
  reused = reused_nodes(upstream, from_nodes, to_nodes)
  store = st.open_store(metadata_path) if os.path.isfile(metadata_path) else None
  latest = {n: st.latest_execution(store, name, n) if store else None for n in reused}
  missing = [n for n, e in latest.items()
             if e is None or e.last_known_state not in (st.STATE.COMPLETE, st.STATE.CACHED)]
  if missing:
    raise PartialRunError(
        f"partial run: expected an earlier successful run under "
        f"{os.path.dirname(metadata_path)} to reuse the outputs of "
        f"{', '.join(missing)}, found none. Run the whole pipeline once first.")
  added, from_nodes = [], list(from_nodes or [])
  for node, execution in latest.items():
    stale = stale_properties(store, components[node], execution)
    if not stale:
      continue
    if node not in RERUN:
      raise PartialRunError(
          f"partial run: {node} last ran with another {' and '.join(stale)} than this "
          f"run resolves (new data, or another span window): its outputs are stale. "
          f"Run the whole pipeline.")
    added.append(f"{node} ({', '.join(stale)})")
    from_nodes.append(node)
  return RunOptions(from_nodes=from_nodes or None, to_nodes=to_nodes), added

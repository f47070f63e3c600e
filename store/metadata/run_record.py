"""The one record of a run, from either runner: each step's state, time and
error, and each output's URI and properties.

A local run's comes from its ML Metadata store (`from_store`); a Kubeflow
run's from the steps' own records in the run's folder
(kubeflow/steps/records.py `run_record`), with the report step's inputs
for the steps the cache served (kubeflow/steps/report.py). Everything that
tells what a run did reads this record and nothing else: the verdict a
local run prints and the notification and `kubeflow runs` line
(store/metadata/outcome.py), and the report (store/report/). So neither the runners nor
these views can drift apart. The record holds no state of the run as a
whole: what the run did is the Outcome's `state`, decided from the steps'
states and outputs (a run whose serving check failed has every step
COMPLETE, and pushed nothing).
"""

import dataclasses
import functools
import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

from ml_metadata.proto import metadata_store_pb2

from runtime import storage
from store.metadata import store as st

# The execution properties the report shows: (node, property).
EXEC_PROPERTIES = (("Evaluator", "eval_config"), ("Transform", "custom_config"),
                   ("Trainer", "custom_config"), ("ServedScore", "serving_dir"))


@dataclasses.dataclass
class Found:
  """One output artifact: its URI, its custom properties as plain values,
  and split -> folder for an artifact with splits (`splits`, from
  `splits_of` when first asked: ML Metadata's are read by TFX's own rules,
  which import TFX, and what a run did needs none of them)."""
  uri: str
  props: Dict[str, Any] = dataclasses.field(default_factory=dict)
  splits_of: Callable[[], Dict[str, str]] = dataclasses.field(default=dict, repr=False)

  @functools.cached_property
  def splits(self) -> Dict[str, str]:
    return self.splits_of()

  @classmethod
  def reported(cls, uri: str, props: Dict[str, Any]) -> "Found":
    """An output as a Kubeflow step reported it: its splits, as TFX lays
    them out, from its `split_names` property."""
    names = json.loads(props["split_names"]) if isinstance(
        props.get("split_names"), str) else []
    return cls(uri, props, lambda: {s: f"{uri}/Split-{s}" for s in names})

  def flag(self, name: str) -> bool:
    """A 0/1 property (ML Metadata keeps an int, Kubeflow's metadata a number)."""
    return bool(float(self.props.get(name) or 0))


@dataclasses.dataclass
class Node:
  state: str  # COMPLETE, CACHED, FAILED, RUNNING, ...
  seconds: Optional[float]
  id: str  # the execution's id (ML Metadata), or "" where none is known
  message: str = ""  # why it failed, where the runner recorded it


@dataclasses.dataclass
class RunRecord:
  pipeline: str
  run_id: str
  started: str
  nodes: Dict[str, Node]  # in the order they ran
  upstream: Dict[str, List[str]]
  outputs: Dict[Tuple[str, str], Found]
  exec_properties: Dict[Tuple[str, str], str]
  parent: Optional[str] = None  # the run a partial run reused

  def output(self, node: str, key: str) -> Optional[Found]:
    return self.outputs.get((node, key))

  def uri(self, node: str, key: str) -> Optional[str]:
    found = self.output(node, key)
    return found.uri if found else None

  def splits(self, node: str, key: str) -> Dict[str, str]:
    found = self.output(node, key)
    return found.splits if found else {}

  def declaration(self):
    """The dataset declaration as the run's Transform or Trainer ran with
    it; None when neither ran."""
    from dataset.types import Declaration
    for node in ("Transform", "Trainer"):
      config = self.exec_properties.get((node, "custom_config"))
      if config:
        return Declaration.from_dict(json.loads(config)["declaration"])
    return None


def _plain(value: metadata_store_pb2.Value):
  kind = value.WhichOneof("value")
  return None if kind is None or kind == "struct_value" else getattr(value, kind)


def from_store(store, pipeline: str, run: st.Run,
               upstream: Dict[str, List[str]]) -> RunRecord:
  """The run's record from ML Metadata."""
  outputs = {}
  for node in run.nodes:
    for key, artifacts in st.outputs(store, run, node).items():
      artifact = artifacts[0]
      outputs[(node, key)] = Found(
          artifact.uri, {k: _plain(v) for k, v in artifact.custom_properties.items()},
          functools.partial(st.split_uris, store, artifact)
          if "split_names" in artifact.properties else dict)
  for node, input_key in STOPPING_GATES.items():
    found = _stopped_gate(store, run, node, input_key)
    if found and (node, "result") not in outputs:
      outputs[(node, "result")] = Found(found)
  return RunRecord(
      pipeline=pipeline, run_id=run.id, started=f"{run.started:%Y-%m-%d %H:%M:%S}",
      parent=run.parent, upstream=upstream, outputs=outputs,
      nodes={n: Node(r.state, r.seconds, str(r.execution.id), _message(r.execution))
             for n, r in run.nodes.items()},
      exec_properties={(node, name): st.exec_property(run.nodes[node].execution, name)
                       for node, name in EXEC_PROPERTIES if node in run.nodes})


def _message(execution) -> str:
  """The last line of a failed execution's error, as TFX's launcher keeps it
  (`__execution_result__`, tfx/orchestration/portable/mlmd/execution_lib.py)."""
  value = execution.custom_properties.get("__execution_result__")
  if value is None or execution.last_known_state != st.STATE.FAILED:
    return ""
  try:
    message = json.loads(value.string_value).get("resultMessage", "")
  except ValueError:
    return ""
  return message.strip().splitlines()[-1] if message.strip() else ""


# A gate that stops a run writes its `result` beside its output folder
# (components/drift_gate/drift_gate.py): gate -> the input whose URI places
# the pipeline root.
STOPPING_GATES = {"DriftGate": "statistics"}


def _stopped_gate(store, run: st.Run, name: str, input_key: str) -> Optional[str]:
  """What a gate found in a run it stopped: such a run published no output
  (and the local runner deleted its output folder), so the file it wrote
  beside that folder is read: `<pipeline root>/<gate>/result/<execution
  id>.json` (tfx/orchestration/portable/outputs_utils.py's layout), the
  pipeline root being three levels above its input's URI."""
  node = run.nodes.get(name)
  if node is None:
    return None
  inputs = dict(st.events(store, node.execution.id, st.INPUTS))
  if input_key not in inputs:
    return None
  root = os.path.dirname(os.path.dirname(os.path.dirname(inputs[input_key].uri)))
  path = os.path.join(root, name, "result", f"{node.execution.id}.json")
  return path if storage.gfile().exists(path) else None


def upstream_from_store(store, run: st.Run) -> Dict[str, List[str]]:
  """node -> upstream nodes, from who produced each node's inputs."""
  upstream: Dict[str, List[str]] = {}
  for node, node_run in run.nodes.items():
    parents = []
    execution = node_run.execution
    for _, artifact in st.events(store, execution.id, st.INPUTS):
      producer = st.producer(store, artifact.id)
      name = producer and st.node_of(store, producer.id)
      if name and name not in parents and name != node:
        parents.append(name)
    upstream[node] = parents
  return upstream


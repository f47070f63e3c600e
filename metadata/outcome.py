"""What a pipeline run did, read back from ML Metadata.

Used by the local runner to print why a model was or was not blessed and
where it was pushed, and by the tests to assert on what really ran.
"""

import dataclasses
import json
from typing import Dict, Optional, Tuple

import tensorflow as tf

import serving
from components import evaluation as results
from components import gate
from components.evaluator import judgement
from components.pusher import REFUSED
from dataset import metrics
from metadata import serving_result
from metadata import store as st
from serving import check as serving_check
from trainer import warm_start


@dataclasses.dataclass
class Outcome:
  """One pipeline run, as recorded in ML Metadata.

  Attributes:
    states: node id -> execution state of this run (`COMPLETE`, `CACHED`,
      `FAILED`, ...); nodes that did not run are absent.
    blessed: whether the Evaluator blessed the model; None if it did not run.
    metric: the metric that blesses (accuracy, auc, rmse or mae).
    value: the candidate model's value of it on the eval split, if evaluated.
    reasons: why a model was not blessed, one line per failed threshold.
    notes: what the Trainer decided: the warm start, the backbone weights.
    pushed_dir: the SavedModel directory the Pusher wrote (or, when cached,
      had written), or None.
    threshold: the thresholds the Evaluator applied to it, in words.
    drift: what DriftGate measured (components/drift_gate.py), if it ran.
    serving: what ServingCheck found (serving/check.py), if it checked.
    seconds: node id -> how long its execution took, as ML Metadata
      recorded it (from creation to its last update).
  """
  states: Dict[str, str]
  seconds: Dict[str, float] = dataclasses.field(default_factory=dict)
  blessed: Optional[bool] = None
  metric: str = "accuracy"
  value: Optional[float] = None
  reasons: tuple = ()
  pushed_dir: Optional[str] = None
  threshold: str = ""
  notes: tuple = ()
  drift: dict = dataclasses.field(default_factory=dict)  # DriftGate's result
  serving: dict = dataclasses.field(default_factory=dict)  # ServingCheck's result
  refused: str = ""  # why the Pusher did not push a blessed model (components/pusher.py)
  judged: dict = dataclasses.field(default_factory=dict)  # components/evaluator.judgement

  @property
  def slices(self) -> tuple:
    """Each declared slice's row (components/evaluation.judge_slices)."""
    return tuple(self.judged.get("slices", ()))

  def summary(self) -> str:
    """The run's last lines: the Trainer's notes (warm start, backbone), the
    blessing and why, and what was pushed."""
    lines = list(self.notes) + self._drift_lines()
    if self.blessed is not None:
      verdict = "blessed" if self.blessed else "NOT blessed"
      lines.append(f"model {verdict}: eval {self.metric} {self.value:.4f}"
                   + (f" (needs {self.threshold})" if self.threshold else ""))
      lines += self._change_lines()
      lines += [f"  {r}" for r in self.reasons]
      lines += [f"  {line}" for line in gate.small_lines(self.judged.get("whole"),
                                                         list(self.slices))]
    if self.serving:
      lines.append(f"serving check: {serving_check.describe(self.serving)}")
    lines.append(f"pushed model: {self.pushed_dir}" if self.pushed_dir
                 else f"no model pushed: {self.refused}" if self.refused
                 else "no model pushed")
    return "\n".join(lines)


  def _change_lines(self) -> list:
    """The paired change against the served model, with its 95% interval."""
    judged = self.judged
    if judged.get("change") is None:
      return []
    interval = (f", 95% interval {judged['change_low']:+.4f} to {judged['change_high']:+.4f}"
                if judged.get("change_low") is not None else "")
    return [f"  against the served model (version {judged['judged_against']}, "
            f"{judged['baseline_value']:.4f} on the same examples): change "
            f"{judged['change']:+.4f}{interval}"]

  def _drift_lines(self) -> list:
    if not self.drift.get("compared"):
      return []
    if not self.drift["drifted"]:
      return [f"drift: none beyond the thresholds ({self.drift['compared']})"]
    return ([f"drift (warn): the newest span moved beyond its thresholds "
             f"({self.drift['compared']}); the run went on (drift.action: warn)"]
            + [f"  {line}" for line in self.drift["drifted"]])


def read_outcome(metadata_path: str, pipeline_name: str) -> Outcome:
  """The latest run of `pipeline_name` in the SQLite store at metadata_path."""
  store = st.open_store(metadata_path)
  all_runs = st.runs(store, pipeline_name)
  if not all_runs:
    return Outcome(states={})
  return outcome_of(store, all_runs[-1])


def verdict(metadata_path: str, pipeline_name: str, serving_dir: str, window: str,
            partial: bool) -> Tuple[str, int]:
  """What a local run decided, as the runner prints it, and its exit status:
  0 when it pushed, or had nothing to push; `window` describes the data.

  A run served wholly from the cache had no new data: not a failure,
  whatever the last real run decided (a scheduled run with nothing new).
  """
  result = read_outcome(metadata_path, pipeline_name)
  if result.states and set(result.states.values()) == {"CACHED"} and not partial:
    return (f"no new data: {window} already went through this pipeline; every "
            f"component came from the cache\nserved model: "
            f"{serving.latest(serving_dir) or 'none'}"), 0
  return result.summary(), 0 if result.pushed_dir or "Pusher" not in result.states else 1


def outcome_of(store, run: st.Run) -> Outcome:
  """One run's outcome."""
  outcome = Outcome(states={})
  for node_id, node_run in run.nodes.items():
    outcome.states[node_id] = node_run.state
    outcome.seconds[node_id] = node_run.seconds
    _read_outputs(store, node_id, node_run.execution, outcome)
  return outcome


def _read_outputs(store, node_id: str, execution, outcome: Outcome) -> None:
  """Fills blessing and push details from the Evaluator's and Pusher's outputs."""
  if node_id == "Trainer":
    for _, artifact in st.events(store, execution.id, st.OUTPUTS):
      outcome.notes = tuple(warm_start.read_notes(artifact.uri)) or outcome.notes
  if node_id == "DriftGate":
    for _, artifact in st.events(store, execution.id, st.OUTPUTS):
      if tf.io.gfile.exists(artifact.uri):
        with tf.io.gfile.GFile(artifact.uri) as f:
          outcome.drift = json.loads(f.read())
  if node_id == "ServingCheck":
    for _, artifact in st.events(store, execution.id, st.OUTPUTS):
      result = serving_result.read_result(artifact)
      if result and result["checked"]:
        outcome.serving = result
  if node_id not in ("Evaluator", "Pusher"):
    return
  key = None
  if node_id == "Evaluator":
    eval_config = st.exec_property(execution, "eval_config")
    blessing = metrics.blessing(eval_config)
    outcome.metric, key = blessing.name, blessing.tfma_key
    outcome.threshold = results.thresholds(eval_config).get(blessing.class_name, "")
  evaluated = None
  for _, artifact in st.events(store, execution.id, st.OUTPUTS):
    props = artifact.custom_properties
    if "blessed" in props and "current_model" in props:
      outcome.blessed = bool(props["blessed"].int_value)
      outcome.judged = judgement(artifact.uri) or {}
    elif "pushed" in props:
      pushed = bool(props["pushed"].int_value)
      outcome.pushed_dir = props["pushed_destination"].string_value if pushed else None
      outcome.refused = props[REFUSED].string_value if REFUSED in props else ""
    elif st.artifact_type(store, artifact) == "ModelEvaluation":
      evaluated = artifact.uri
      outcome.value = results.load(evaluated).get((), {}).get("candidate", {}).get(key)
  if evaluated:
    outcome.reasons = tuple(results.counted_failures(outcome.judged, evaluated))


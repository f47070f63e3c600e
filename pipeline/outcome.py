"""What a pipeline run did, read back from ML Metadata.

Used by the local runner to print why a model was or was not blessed and
where it was pushed, and by the tests to assert on what really ran.
"""

import dataclasses
from typing import Dict, Optional

import tensorflow_model_analysis as tfma

from debug import store as st
from pipeline.evaluation import METRIC


@dataclasses.dataclass
class Outcome:
  """One pipeline run, as recorded in ML Metadata.

  Attributes:
    states: node id -> execution state of this run (`COMPLETE`, `CACHED`,
      `FAILED`, ...); nodes that did not run are absent.
    blessed: whether the Evaluator blessed the model; None if it did not run.
    accuracy: the candidate model's eval accuracy, if evaluated.
    reasons: why a model was not blessed, one line per failed threshold.
    pushed_dir: the SavedModel directory the Pusher wrote (or, when cached,
      had written), or None.
    seconds: node id -> how long its execution took, as ML Metadata
      recorded it (from creation to its last update).
  """
  states: Dict[str, str]
  seconds: Dict[str, float] = dataclasses.field(default_factory=dict)
  blessed: Optional[bool] = None
  accuracy: Optional[float] = None
  reasons: tuple = ()
  pushed_dir: Optional[str] = None

  def summary(self) -> str:
    """The run's last lines: the blessing and why, and what was pushed."""
    lines = []
    if self.blessed is not None:
      verdict = "blessed" if self.blessed else "NOT blessed"
      lines.append(f"model {verdict}: eval accuracy {self.accuracy:.4f}")
      lines += [f"  {r}" for r in self.reasons]
    lines.append(f"pushed model: {self.pushed_dir}" if self.pushed_dir
                 else "no model pushed")
    return "\n".join(lines)


def _evaluation(uri: str) -> tuple:
  """(accuracy, failed-threshold lines) from an Evaluator output folder."""
  accuracy = None
  for metrics in tfma.load_metrics(uri):
    if not metrics.slice_key.single_slice_keys:
      for kv in metrics.metric_keys_and_values:
        if (kv.key.name == METRIC and not kv.key.is_diff
            and kv.key.model_name != "baseline"):
          accuracy = kv.value.double_value.value
  reasons = []
  for per_slice in tfma.load_validation_result(uri).metric_validations_per_slice:
    for failure in per_slice.failures:
      kind = "change against the baseline" if failure.metric_key.is_diff else "value"
      reasons.append(f"{failure.metric_key.name} {kind} "
                     f"{failure.metric_value.double_value.value:.4f} fails "
                     f"its threshold {failure.metric_threshold}".replace("\n", " "))
  return accuracy, tuple(reasons)


def read_outcome(metadata_path: str, pipeline_name: str) -> Outcome:
  """The latest run of `pipeline_name` in the SQLite store at metadata_path."""
  store = st.open_store(metadata_path)
  all_runs = st.runs(store, pipeline_name)
  if not all_runs:
    return Outcome(states={})
  outcome = Outcome(states={})
  for node_id, node_run in all_runs[-1].nodes.items():
    outcome.states[node_id] = node_run.state
    outcome.seconds[node_id] = node_run.seconds
    _read_outputs(store, node_id, node_run.execution, outcome)
  return outcome


def _read_outputs(store, node_id: str, execution, outcome: Outcome) -> None:
  """Fills blessing and push details from the Evaluator's and Pusher's outputs."""
  if node_id not in ("Evaluator", "Pusher"):
    return
  for _, artifact in st.events(store, execution.id, st.OUTPUTS):
    props = artifact.custom_properties
    if "blessed" in props and "current_model" in props:
      outcome.blessed = bool(props["blessed"].int_value)
    elif "pushed" in props:
      pushed = bool(props["pushed"].int_value)
      outcome.pushed_dir = props["pushed_destination"].string_value if pushed else None
    elif st.artifact_type(store, artifact) == "ModelEvaluation":
      outcome.accuracy, outcome.reasons = _evaluation(artifact.uri)

"""What a run decided, as a view of its one record (store/metadata/run_record.py).

The local runner prints it (`verdict`, store/metadata/summary.py), the report
shows it (store/report/), `python -m commands.debug runs` lists it, the exit
step sends it (kubeflow/steps/notify.py) and `python -m commands.kubeflow runs`
lists it: all from the same `Outcome` of the same `RunRecord`, whichever
runner ran. `state` is what the run did, in a few words (pushed; not pushed
and why; failed at which step): the one answer every one of them gives. The record's properties (states, the blessing, the push) cost
nothing; the artifacts' files (the judgement, the metrics, the drift, the
serving check, the Trainer's notes) are read when first asked for.
"""

import functools
import json
from typing import Dict, Optional, Tuple

from store.metadata import run_record
from store.metadata import store as st

# The steps that stop a run on its data by failing (components/anomalies_gate/,
# components/drift_gate/): such a run did what it should, and pushed nothing.
GATES = ("AnomaliesGate", "DriftGate")
SERVING_FAILED = "not pushed: serving check failed"
NOTHING_NEW = "nothing new to train on (served from the cache)"


class Outcome:
  """One run's outcome.

  Attributes (each read from the record):
    states, seconds: node id -> its state (`COMPLETE`, `CACHED`, `FAILED`,
      ...) and how long it took; nodes that did not run are absent.
    failed_step, message: the first step that failed or never finished, why.
    blessed: the Evaluator's verdict; None if it did not run.
    pushed_dir, pushed_version: what the Pusher pushed (or, cached, had
      pushed); refused: why it did not push a blessed model.
    serving_failure: why ServingCheck refused a blessed model, if it did.
    state: what the run did, in a few words, from all of the above.
  Read from the artifacts, when asked: judged (components/evaluator.judgement),
  metric, value, threshold, reasons, notes, drift, serving.
  """

  def __init__(self, record: Optional[run_record.RunRecord]):
    self.record = record
    nodes = record.nodes if record else {}
    self.states: Dict[str, str] = {n: r.state for n, r in nodes.items()}
    self.seconds: Dict[str, Optional[float]] = {n: r.seconds for n, r in nodes.items()}
    stopped = [n for n, r in nodes.items() if r.state in ("FAILED", "RUNNING")]
    self.failed_step = stopped[0] if stopped else None
    self.message = (nodes[self.failed_step].message
                    or "started but never finished: killed? (its log says why)"
                    if self.failed_step else "")
    blessing = self._output("Evaluator", "blessing")
    self.blessed = blessing.flag("blessed") if blessing else None
    pushed = self._output("Pusher", "pushed_model")
    done = bool(pushed and pushed.flag("pushed"))
    self.pushed_dir = pushed.props.get("pushed_destination") if done else None
    self.pushed_version = _text(pushed.props.get("pushed_version")) if done else None
    self.refused = ""
    if pushed and not done:
      from components.pusher import REFUSED  # why it did not push a blessed model
      self.refused = pushed.props.get(REFUSED) or ""
    check = self._output("ServingCheck", "infra_blessing")
    self.serving_failure = None
    if check and check.flag("checked") and not check.flag("blessed"):
      self.serving_failure = check.props.get("reason") or "failed"

  def _output(self, node: str, key: str) -> Optional[run_record.Found]:
    return self.record.output(node, key) if self.record else None

  @property
  def failed(self) -> bool:
    return self.failed_step is not None

  @functools.cached_property
  def judged(self) -> dict:
    """What the blessing was judged on (components/evaluator/gate.py's rows included)."""
    from components.evaluator.evaluator import judgement
    blessing = self._output("Evaluator", "blessing")
    return (judgement(blessing.uri) if blessing else None) or {}

  @property
  def slices(self) -> tuple:
    """Each declared slice's row (components/evaluator/gate.py)."""
    return tuple(self.judged.get("slices", ()))

  @property
  def _eval_config(self) -> Optional[str]:
    return self.record.exec_properties.get(("Evaluator", "eval_config")) if self.record else None

  @functools.cached_property
  def _blessing_metric(self):
    from dataset import metrics
    return metrics.blessing(self._eval_config) if self._eval_config else None

  @property
  def metric(self) -> str:
    """The metric that blesses (accuracy, auc, rmse or mae)."""
    return self._blessing_metric.name if self._blessing_metric else "accuracy"

  @functools.cached_property
  def threshold(self) -> str:
    """The thresholds the Evaluator applied to the metric, in words."""
    from components.evaluator import evaluation
    if not self._eval_config:
      return ""
    return evaluation.thresholds(self._eval_config).get(self._blessing_metric.class_name, "")

  @functools.cached_property
  def value(self) -> Optional[float]:
    """The candidate's value of the metric on the eval split."""
    from components.evaluator import evaluation
    found = self._output("Evaluator", "evaluation")
    if not found or not self._blessing_metric:
      return None
    overall = evaluation.load(found.uri).get((), {})
    return overall.get("candidate", {}).get(self._blessing_metric.tfma_key)

  @functools.cached_property
  def reasons(self) -> tuple:
    """Why the model was not blessed, one line per refusal."""
    from components.evaluator import evaluation
    found = self._output("Evaluator", "evaluation")
    return tuple(evaluation.counted_failures(self.judged, found.uri)) if found else ()

  @functools.cached_property
  def notes(self) -> tuple:
    """What the Trainer decided: the warm start, the backbone's weights."""
    from trainer import warm_start
    found = self._output("Trainer", "model_run")
    return tuple(warm_start.read_notes(found.uri)) if found else ()

  @functools.cached_property
  def drift(self) -> dict:
    """What DriftGate measured (components/drift_gate/), if it ran."""
    return _json(self.record.uri("DriftGate", "result")) if self.record else {}

  @functools.cached_property
  def image_check(self) -> dict:  # components/image_check/result.py, if it ran
    return _json(self.record.uri("ImageCheck", "result")) if self.record else {}
  @functools.cached_property
  def served_score(self) -> dict:  # components/served_score/, if it ran
    return _json(self.record.uri("ServedScore", "score")) if self.record else {}
  @functools.cached_property
  def serving_check(self) -> Optional[dict]:
    """ServingCheck's result file (check.py) with whether it checked; None if it did not run."""
    from store.metadata import serving_result
    found = self._output("ServingCheck", "infra_blessing")
    return serving_result.read_at(found.uri, found.flag("checked")) if found else None

  @property
  def serving(self) -> dict:
    """What ServingCheck found, if it checked."""
    result = self.serving_check
    return result if result and result["checked"] else {}

  @property
  def state(self) -> str:
    """What the run did, in a few words: `debug runs`, the report's header
    and the record's state. Pushed; not pushed, and what stopped it (a gate,
    the blessing, the serving check, the Pusher's refusal); failed at a step;
    or nothing new (every step from the cache)."""
    if self.failed:
      if self.failed_step in GATES:
        return f"not pushed: stopped by {self.failed_step}"
      return f"failed at {self.failed_step}"
    if not self.states:
      return "nothing recorded"
    pusher = self.states.get("Pusher")
    # A Pusher from the cache decided nothing now, whatever it decided then.
    if pusher == "CACHED" or (pusher is None and self._cached_steps_unrecorded):
      return NOTHING_NEW
    if self.pushed_version:
      return f"pushed version {self.pushed_version}"
    if self.blessed is False:
      return "not pushed: not blessed"
    if self.serving_failure:
      return SERVING_FAILED
    if self.refused:
      return f"not pushed: {self.refused}"
    if pusher is None:
      return "complete, without the Pusher (a partial run)"
    return "not pushed"

  @property
  def _cached_steps_unrecorded(self) -> bool:
    """A Kubeflow step the cache served writes no record of its own
    (kubeflow/steps/records.py), so there a missing Pusher was cached; a
    local run records every step, cached ones too, with its execution id."""
    return not any(node.id for node in self.record.nodes.values())

  def push_line(self) -> str:
    """`state` with the serving check's why, for the notice and `kubeflow
    runs` (which name a failed step and its message themselves)."""
    if self.failed and self.failed_step not in GATES:
      return "nothing pushed"
    if self.state == SERVING_FAILED:
      return f"{SERVING_FAILED} ({self.serving_failure})"
    return self.state

  def summary(self) -> str:
    """The run's last lines, as the local runner prints them (store/metadata/summary.py)."""
    from store.metadata import summary
    return summary.text(self)


def _text(value) -> Optional[str]:
  """A property as words: Kubeflow's metadata keeps numbers as doubles."""
  if isinstance(value, float) and value.is_integer():
    return str(int(value))
  return None if value is None else str(value)


def _json(uri: Optional[str]) -> dict:
  from runtime import storage  # a file on any of the runners' stores
  if not uri or not storage.gfile().exists(uri):
    return {}
  with storage.gfile().GFile(uri) as f:
    return json.loads(f.read())


def read_outcome(metadata_path: str, pipeline_name: str) -> Outcome:
  """The latest run of `pipeline_name` in the SQLite store at metadata_path."""
  store = st.open_store(metadata_path)
  all_runs = st.runs(store, pipeline_name)
  if not all_runs:
    return Outcome(None)
  return Outcome(run_record.from_store(store, pipeline_name, all_runs[-1], {}))


def verdict(metadata_path: str, pipeline_name: str, serving_dir: str, window: str,
            partial: bool) -> Tuple[str, int]:
  """What a local run decided, as the runner prints it, and its exit status:
  0 when it pushed, or had nothing to push; `window` describes the data.

  A run whose Pusher the cache served had no new data: not a failure,
  whatever the last real run decided (a scheduled run with nothing new).
  """
  import serving
  result = read_outcome(metadata_path, pipeline_name)
  if result.state == NOTHING_NEW and not partial:
    return (f"no new data: {window} already went through this pipeline; every "
            f"component came from the cache\nserved model: "
            f"{serving.latest(serving_dir) or 'none'}"), 0
  return result.summary(), 0 if result.pushed_dir or "Pusher" not in result.states else 1

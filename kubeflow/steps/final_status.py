"""The run's state for the notice (kubeflow/steps/notify.py): Kubeflow's own
where the exit step is handed it, else its steps' records, and which it was.

Kubeflow tells an exit step how the steps it guards ended only through an
input of type TASK_FINAL_STATUS (`PipelineTaskFinalStatus`), which
kubeflow/compile/exit_handler.py adds with `--final-status`. In
kubeflow/pipelines:
- the open-source backend resolves it from 2.14.0 on (#11953;
  `backend/src/v2/driver/resolve.go`@2.14.0 lines 412-447, @2.15.0 lines
  438-473, @2.17.0 lines 458-493): `state` is the exit handler DAG's state
  in ML Metadata, COMPLETE once all its steps completed or came from the
  cache, FAILED once one failed (`metadata/client.go`
  UpdateDAGExecutionsState, @2.14.0 lines 707-748, @2.17.0 lines 800-878),
  and still RUNNING if a step ended without its launcher publishing (a pod
  killed, evicted, never started). Its `error` is left empty ("TODO:
  Implement fields "Message and "Code"", line 429 at 2.14.0, 475 at 2.17.0);
- before 2.14 the API server refuses to start a run of a spec that asks
  for it (`argocompiler/dag.go`@2.5.0 lines 629-630), so compile adds it
  only when asked;
- Vertex AI and the proto name the states SUCCEEDED, FAILED, CANCELLED
  (`pipeline_spec.proto`@2.17.0 lines 1073-1103), and fill `error`.

The launcher fails a step after its program ended (uploading an output or
the step's log, publishing to ML Metadata: `component/launcher_v2.go`
@2.17.0 lines 187-229 and 299, @2.5.0 lines 179-202 and 243, publish FAILED
unless all of it went through), while its record says COMPLETE. Only Kubeflow's state tells that run apart; its
words are in the step's log, which no backend hands an exit step.
"""

import dataclasses
from typing import Optional

PARAM = "status"  # the exit step's input of type TASK_FINAL_STATUS
SUCCEEDED, FAILED, CANCELLED = "SUCCEEDED", "FAILED", "CANCELLED"
# The state as each backend spells it: ML Metadata's Execution.State names
# on the open-source backend, PipelineTaskState names on Vertex AI.
STATES = {"COMPLETE": SUCCEEDED, "SUCCEEDED": SUCCEEDED, "FAILED": FAILED,
          "CANCELED": CANCELLED, "CANCELLED": CANCELLED}
KUBEFLOW = "Kubeflow (the exit handler's final status)"
RECORDS = ("the steps' records alone: Kubeflow gave this exit step no final status "
           "(--final-status, for Kubeflow Pipelines 2.14 and later)")
UNRECORDED = "not recorded"  # the failed step, when no record names it


@dataclasses.dataclass(frozen=True)
class Verdict:
  """How the run ended, for the notice.

  Attributes:
    state: SUCCEEDED, FAILED or CANCELLED.
    source: where `state` came from, in words (KUBEFLOW or RECORDS).
    failed_step: the step the records name, UNRECORDED when none does,
      None for a run that succeeded.
    message: why it failed, from the step's record, else from Kubeflow.
  """
  state: str
  source: str
  failed_step: Optional[str]
  message: str

  @property
  def succeeded(self) -> bool:
    return self.state == SUCCEEDED


def verdict(status, outcome) -> Verdict:
  """The run's Verdict.

  Args:
    status: the exit step's final status input as the backend resolved it
      (a dict: state, error, pipelineTaskName, ...), or None when the spec
      asks for none; anything else is read as None.
    outcome: the run's store.metadata.outcome.Outcome, from its records.
  """
  if not isinstance(status, dict):
    return Verdict(FAILED if outcome.failed else SUCCEEDED, RECORDS,
                   outcome.failed_step, outcome.message)
  said = str(status.get("state") or "")
  state = STATES.get(said.upper(), FAILED)
  if state == SUCCEEDED:
    return Verdict(SUCCEEDED, KUBEFLOW, None, "")
  error = status.get("error")
  error = str(error.get("message") or "") if isinstance(error, dict) else ""
  if outcome.failed:  # the step's own words say more than Kubeflow's
    return Verdict(state, KUBEFLOW, outcome.failed_step, outcome.message or error)
  return Verdict(state, KUBEFLOW, UNRECORDED, error or _unrecorded(said, outcome))


def _unrecorded(said: str, outcome) -> str:
  """Why Kubeflow failed a run whose records show no failure, in words."""
  if STATES.get(said.upper()) == CANCELLED:
    how = "Kubeflow cancelled the run"
  elif said.upper() in STATES:
    how = ("Kubeflow failed a step whose program recorded no failure: its launcher "
           "failed after the program ended (uploading an output or the step's log, "
           "publishing to ML Metadata), or before it started")
  else:
    how = (f"Kubeflow's state of the steps is {said or 'empty'}: a step ended without "
           "its launcher reporting (its pod killed, evicted or never started)")
  started = list(outcome.states)
  last = f" (the last step to start: {started[-1]})" if started else ""
  return f"{how}{last}; the step's log in the Kubeflow UI says why"

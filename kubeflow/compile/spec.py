"""Editing a compiled pipeline spec (its dict): the steps and one way to add
a step, which every added step uses (the run report, retention, the exit
handler's notice). Works on the dict alone: no TFX, no TensorFlow.

An added step runs `python -m <module> '{{$}}'` (its executor input, as the
backend gives it) in the image of the step it is modelled on, with its
environment; each of its parameters is a STRING.
"""

import copy
from typing import Dict, List, Optional, Tuple

from kubeflow.steps import records

EXIT_DAG = "exit-handler-1"  # where the steps move when an exit handler is added
DEFAULT_RETRIES = 2  # one preemption, and a second on the retry's node
# Between attempts: 30 s, then twice as long each time (a preempted node's
# replacement takes a minute or two to join). The max duration means two
# things: on the open-source backend Argo retries no failure later than that
# after the first attempt started (argo-workflows operator.go@v4.0.5 lines
# 1026-1041); on Vertex AI it caps each wait ("Configure retries"). An hour
# is the most the kfp SDK writes (structures.py caps `backoff_max_duration`
# at 3600 s, as Vertex takes it).
BACKOFF = {"backoffDuration": "30s", "backoffFactor": 2.0, "backoffMaxDuration": "3600s"}


def retry_policy(retries: int) -> Optional[Dict]:
  """A PipelineTaskSpec.RetryPolicy, as JSON; None for no retries. TFX
  compiles none; the backend's Argo compiler turns it into the step's
  `retryStrategy`, which re-runs the executor pod alone, with the same
  executor input and output URIs."""
  return {"maxRetryCount": retries, **BACKOFF} if retries else None


def tasks(spec: Dict) -> Dict:
  """The pipeline's steps, inside the exit handler's DAG if there is one;
  none for a spec without a DAG (a single component's)."""
  root = spec.get("root", {}).get("dag", {}).get("tasks", {})
  if EXIT_DAG in root:
    return spec["components"][root[EXIT_DAG]["componentRef"]["name"]]["dag"]["tasks"]
  return root


def container_of(spec: Dict, task: str) -> Dict:
  """The container a compiled step runs in."""
  label = spec["components"][task]["executorLabel"]
  return spec["deploymentSpec"]["executors"][label]["container"]


def uncached(steps: Dict) -> List[str]:
  """The steps Kubeflow's cache never serves."""
  return sorted(t for t, task in steps.items()
                if not task.get("cachingOptions", {}).get("enableCache"))


def first_step(steps: Dict) -> str:
  """The first, by name, of the steps a run starts with (no upstream task):
  never the Trainer or the Tuner, whose containers carry their own workers'
  settings. The tasks' order is not fixed, so `next(iter(steps))` was not
  either."""
  return sorted(t for t, task in steps.items() if not task.get("dependentTasks"))[0]


def add_step(spec: Dict, steps: Dict, task: str, module: str, *, like: Dict,
             parameters: Dict[str, Dict], output: Tuple[str, str],
             depends: List[str], artifacts: Optional[Dict[str, Tuple[Dict, Dict]]] = None,
             retry_policy: Optional[Dict] = None, recorded: bool = True,
             names: Optional[Tuple[str, str]] = None, trigger: Optional[str] = None) -> None:
  """Adds step `task` to `steps` (a DAG's tasks in `spec`), in place.

  Args:
    module: what the step runs, `python -m module`.
    like: the container whose image, environment and resources it takes.
    parameters: each input parameter's source in the task (a
      `componentInputParameter`, `runtimeValue` or `taskOutputParameter`).
    output: (its output artifact's key, its schema title, e.g. system.HTML).
    depends: the tasks it runs after.
    artifacts: input name -> (its artifactType, its source in the task).
    retry_policy: the compiled retry policy, or None.
    recorded: whether it writes a step record (kubeflow/steps/records.py):
      its task's name in its environment; else no record variables at all.
    names: (component, executor label); default TFX's spelling, (task,
      `<task>_executor`), so the platform flags reach it as any step.
    trigger: the task's trigger strategy, if not the default.
  """
  component, executor = names or (task, f"{task}_executor")
  env = {e["name"]: e for e in copy.deepcopy(like.get("env", []))}
  if recorded:
    env[records.TASK_ENV] = {"name": records.TASK_ENV, "value": task}
  else:
    for name in (records.PIPELINE_ENV, records.TASK_ENV, records.RETRIES_ENV):
      env.pop(name, None)
  container = {"image": like["image"], "command": ["python", "-m", module],
               "args": ["{{$}}"], "env": [env[k] for k in sorted(env)]}
  if recorded and "resources" in like:
    container["resources"] = copy.deepcopy(like["resources"])
  spec["deploymentSpec"]["executors"][executor] = {"container": container}
  artifacts = artifacts or {}
  inputs = {"parameters": {name: {"parameterType": "STRING"} for name in parameters}}
  if artifacts:
    inputs["artifacts"] = {name: {"artifactType": kind} for name, (kind, _) in artifacts.items()}
  spec["components"][component] = {
      "executorLabel": executor, "inputDefinitions": inputs,
      "outputDefinitions": {"artifacts": {output[0]: {"artifactType": {
          "schemaTitle": output[1], "schemaVersion": "0.0.1"}}}}}
  given = {"parameters": parameters}
  if artifacts:
    given["artifacts"] = {name: source for name, (_, source) in artifacts.items()}
  steps[task] = {"componentRef": {"name": component}, "dependentTasks": list(depends),
                 "inputs": given, "taskInfo": {"name": task},
                 **({"retryPolicy": retry_policy} if retry_policy else {}),
                 **({"triggerPolicy": {"strategy": trigger}} if trigger else {})}

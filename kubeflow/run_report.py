"""The run report on Kubeflow: a step that writes the report a local run
writes (report/), as a `system.HTML` artifact the run page shows.

A local run's report is read from its ML Metadata store. A Kubeflow step
has no such store at hand, so the compiled spec gets one more step,
`RunReport`, added here after TFX's compiler:
- its inputs are every other step's outputs, so the backend hands it each
  artifact's URI and metadata, whether the step ran or was served from the
  cache; and the Evaluator's and the Trainer's configuration parameters, as
  those steps take them;
- it runs after all of them (it takes their outputs), so a run that failed
  earlier has no report: the steps' records, the exit step and `python -m
  kubeflow runs` tell that run;
- it is never cached: its page would show an earlier run;
- each step's state and time come from the steps' records in the run's
  folder (kubeflow/step_status.py); a step with no record in this run was
  served from the cache;
- its own record, COMPLETE, lists every artifact the run used, cached ones
  included: the run's finished, and retention keeps what it lists
  (kubeflow/retention_step.py).

    python -m kubeflow.run_report '{{$}}'     (the executor input)
"""

import copy
import datetime
import json
import sys
from typing import Dict, List, Optional

import startup
import storage
from kubeflow import step_status

TASK = "RunReport"
OUTPUT = "report"
UPSTREAM = "upstream"
SEPARATOR = "__"  # input name: <task>__<output key>
# (node, its parameter) the report reads: report/record.py EXEC_PROPERTIES.
PARAMETERS = (("Evaluator", "eval_config"), ("Transform", "custom_config"),
              ("Trainer", "custom_config"))


def add(spec: Dict, tasks: Dict, retry_policy: Optional[Dict]) -> None:
  """Adds the report step to the pipelineSpec dict, beside `tasks` (the
  DAG's tasks, which it reads), in place."""
  executors = spec["deploymentSpec"]["executors"]
  step = next(iter(tasks))
  container = copy.deepcopy(executors[spec["components"][step]["executorLabel"]]["container"])
  artifacts, inputs = {}, {}
  for task in tasks:
    outputs = spec["components"][tasks[task]["componentRef"]["name"]].get(
        "outputDefinitions", {}).get("artifacts", {})
    for key, declared in outputs.items():
      artifacts[f"{task}{SEPARATOR}{key}"] = {"artifactType": declared["artifactType"]}
      inputs[f"{task}{SEPARATOR}{key}"] = {"taskOutputArtifact": {
          "producerTask": task, "outputArtifactKey": key}}
  parameters = {"pipeline_name": {"runtimeValue": {"constant": spec["pipelineInfo"]["name"]}},
                UPSTREAM: {"runtimeValue": {"constant": json.dumps(
                    {t: tasks[t].get("dependentTasks", []) for t in tasks})}}}
  for node, name in PARAMETERS:
    given = tasks.get(node, {}).get("inputs", {}).get("parameters", {}).get(name)
    if given:
      parameters[f"{node}{SEPARATOR}{name}"] = copy.deepcopy(given)
  # Named as TFX's compiler names its steps' (the component is the task's
  # name, its executor `<task>_executor`), so the platform flags reach it.
  spec["components"][TASK] = {
      "executorLabel": f"{TASK}_executor",
      "inputDefinitions": {"artifacts": artifacts, "parameters": {
          name: {"parameterType": "STRING"} for name in parameters}},
      "outputDefinitions": {"artifacts": {OUTPUT: {"artifactType": {
          "schemaTitle": "system.HTML", "schemaVersion": "0.0.1"}}}}}
  env = {e["name"]: e for e in container.get("env", [])}
  env[step_status.TASK_ENV] = {"name": step_status.TASK_ENV, "value": TASK}
  executors[f"{TASK}_executor"] = {"container": {
      "image": container["image"], "command": ["python", "-m", "kubeflow.run_report"],
      "args": ["{{$}}"], "env": [env[k] for k in sorted(env)],
      **({"resources": container["resources"]} if "resources" in container else {})}}
  tasks[TASK] = {"componentRef": {"name": TASK}, "dependentTasks": sorted(tasks),
                 "inputs": {"artifacts": inputs, "parameters": parameters},
                 "taskInfo": {"name": TASK},
                 **({"retryPolicy": retry_policy} if retry_policy else {})}


def _seconds(record: dict):
  try:
    return (datetime.datetime.fromisoformat(record["time"])
            - datetime.datetime.fromisoformat(record["started"])).total_seconds()
  except (KeyError, ValueError):
    return None


def _in_order(upstream: Dict[str, List[str]]) -> List[str]:
  """The tasks, each after those it depends on."""
  ordered: List[str] = []
  while len(ordered) < len(upstream):
    ready = [t for t in upstream if t not in ordered
             and all(u in ordered or u not in upstream for u in upstream[t])]
    ordered += ready or sorted(set(upstream) - set(ordered))
  return ordered


def run_record(executor_input: dict, records: Dict[str, dict], run_id: str):
  """The run as the report reads it (report/record.py), from this step's
  inputs and the steps' records."""
  from kubeflow.container import BACKEND_KEYS, unwrap
  from report import record
  params = executor_input["inputs"].get("parameterValues", {})
  upstream: Dict[str, List[str]] = json.loads(params[UPSTREAM])
  outputs = {}
  for name, listed in executor_input["inputs"].get("artifacts", {}).items():
    task, _, key = name.partition(SEPARATOR)
    artifact = listed["artifacts"][0]
    props = {k: unwrap(v) for k, v in artifact.get("metadata", {}).items()
             if k not in BACKEND_KEYS}
    splits = json.loads(props["split_names"]) if isinstance(
        props.get("split_names"), str) else []
    outputs[(task, key)] = record.Found(
        artifact["uri"], props, {s: f"{artifact['uri']}/Split-{s}" for s in splits})
  nodes = {}
  for task in _in_order(upstream):
    mine = records.get(task)
    nodes[task] = (record.Node(mine["state"], _seconds(mine), "") if mine
                   else record.Node("CACHED", None, ""))
  states = {n.state for n in nodes.values()}
  return record.RunRecord(
      pipeline=params["pipeline_name"], run_id=run_id,
      started=min((r.get("started", "") for r in records.values()), default="")[:19],
      state=next((s for s in ("FAILED", "RUNNING") if s in states), "COMPLETE"),
      nodes=nodes, upstream=upstream, outputs=outputs,
      exec_properties={(node, name): params.get(f"{node}{SEPARATOR}{name}")
                       for node, name in PARAMETERS})


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  pipeline = executor_input["inputs"]["parameterValues"]["pipeline_name"]
  uri = executor_input["outputs"]["artifacts"][OUTPUT]["artifacts"][0]["uri"]
  folder = step_status.run_folder([uri], pipeline, TASK)
  storage.enable([uri])
  records = step_status.read(folder) if folder else {}
  started = datetime.datetime.now(datetime.timezone.utc).isoformat()
  from report import render
  text = render(run_record(executor_input, records,
                           step_status.run_id(folder) if folder else "(not known)"))
  import tensorflow as tf
  with tf.io.gfile.GFile(uri, "w") as f:  # the file at the URI, as the UI reads it
    f.write(text)
  if folder:  # every artifact of the run, cached ones included: retention keeps them
    step_status.write(folder, TASK, step_status.COMPLETE, started=started,
                      **step_status.artifact_uris(executor_input))
  print(f"report: {uri}")
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv))

"""The run report on Kubeflow: a step that writes the report a local run
writes (report/), as a `system.HTML` artifact the run page shows.

A local run's report is read from its ML Metadata store. A Kubeflow step
has no such store at hand, so the compiled spec gets this step, `RunReport`
(kubeflow/compile/report_step.py adds it), whose inputs are every other
step's outputs:
- each step's state and time come from the steps' records in the run's
  folder (kubeflow/steps/records.py); a step with no record in this run was
  served from the cache;
- its own record, COMPLETE, lists every artifact the run used, cached ones
  included: the run's finished, and retention keeps what it lists
  (kubeflow/steps/retention.py).

    python -m kubeflow.steps.report '{{$}}'     (the executor input)
"""

import datetime
import json
import sys
from typing import Dict, List

import startup
import storage
from kubeflow.steps import records as step_records

TASK = "RunReport"
OUTPUT = "report"
UPSTREAM = "upstream"
SEPARATOR = "__"  # input name: <task>__<output key>


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
  from kubeflow.steps.entrypoint import BACKEND_KEYS, unwrap
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
                       for node, name in record.EXEC_PROPERTIES})


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  pipeline = executor_input["inputs"]["parameterValues"]["pipeline_name"]
  uri = executor_input["outputs"]["artifacts"][OUTPUT]["artifacts"][0]["uri"]
  folder = step_records.run_folder([uri], pipeline, TASK)
  storage.enable([uri])
  records = step_records.read(folder) if folder else {}
  started = datetime.datetime.now(datetime.timezone.utc).isoformat()
  from report import render
  text = render(run_record(executor_input, records,
                           step_records.run_id(folder) if folder else "(not known)"))
  import tensorflow as tf
  with tf.io.gfile.GFile(uri, "w") as f:  # the file at the URI, as the UI reads it
    f.write(text)
  if folder:  # every artifact of the run, cached ones included: retention keeps them
    step_records.write(folder, TASK, step_records.COMPLETE, started=started,
                      **step_records.artifact_uris(executor_input))
  print(f"report: {uri}")
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv))

"""The run report on Kubeflow: a step that writes the report a local run
writes (store/report/), as a `system.HTML` artifact the run page shows.

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

from kubeflow.steps import backend
from kubeflow.steps import records as step_records
from runtime import run_layout, startup, storage

TASK = "RunReport"
OUTPUT = "report"
UPSTREAM = "upstream"
SEPARATOR = "__"  # input name: <task>__<output key>


def _in_order(upstream: Dict[str, List[str]]) -> List[str]:
  """The tasks, each after those it depends on."""
  ordered: List[str] = []
  while len(ordered) < len(upstream):
    ready = [t for t in upstream if t not in ordered
             and all(u in ordered or u not in upstream for u in upstream[t])]
    ordered += ready or sorted(set(upstream) - set(ordered))
  return ordered


def run_record(executor_input: dict, records: Dict[str, dict], run_id: str):
  """The run's one record (store/metadata/run_record.py), from the steps' records
  and this step's inputs: every step's outputs, cached ones included."""
  from kubeflow.steps.entrypoint import BACKEND_KEYS, unwrap
  from store.metadata import run_record as rr
  params = executor_input["inputs"].get("parameterValues", {})
  upstream: Dict[str, List[str]] = json.loads(params[UPSTREAM])
  ran = step_records.run_record(records, params["pipeline_name"], run_id)
  for name, listed in executor_input["inputs"].get("artifacts", {}).items():
    task, _, key = name.partition(SEPARATOR)
    artifact = listed["artifacts"][0]
    props = {k: unwrap(v) for k, v in artifact.get("metadata", {}).items()
             if k not in BACKEND_KEYS}
    ran.outputs[(task, key)] = rr.Found.reported(artifact["uri"], props)
  # Every task of the DAG, in its order; one with no record was cached.
  ran.nodes = {task: ran.nodes.get(task) or rr.Node("CACHED", None, "")
               for task in _in_order(upstream)}
  ran.upstream = upstream
  ran.exec_properties = {(node, name): params.get(f"{node}{SEPARATOR}{name}")
                         for node, name in rr.EXEC_PROPERTIES}
  return ran


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  refused = backend.refusal(executor_input)
  if refused:
    print(refused, file=sys.stderr)
    return 1
  pipeline = executor_input["inputs"]["parameterValues"]["pipeline_name"]
  uri = executor_input["outputs"]["artifacts"][OUTPUT]["artifacts"][0]["uri"]
  found = run_layout.locate([uri], pipeline, TASK)
  folder = found.run if found else None
  storage.enable([uri])
  records = step_records.read(folder) if folder else {}
  started = datetime.datetime.now(datetime.timezone.utc).isoformat()
  from store.report import render
  text = render(run_record(executor_input, records,
                           found.run_id if found else "(not known)"))
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

"""What each compiled step did, written beside the run's artifacts.

The open-source backend keeps a step's state in ML Metadata and its error in
the pod's log, and tells an exit step neither on most versions: the final
status input (`taskFinalStatus`) is implemented from 2.14 on
(kubeflow/pipelines#11953, `driver/resolve.go`), and even there without the
error's message; the run-id placeholder from 2.5 on (#11599). What every
version from 2.0 gives a step is its output artifacts' URIs, which all lie
in the run's own folder: `<pipeline root>/<pipeline name>/<run id>/<task>/…`
on the open-source backend, `<pipeline root>/<project number>/<job id>/
<task>_<id>/…` on Vertex AI (runtime/run_layout.py cites both).

So each step finds that folder from its outputs and writes
`status/<task>.json` there: RUNNING as it starts, with the URIs of the
artifacts it reads and writes, then COMPLETE with its
outputs' metadata and output parameters, or FAILED with its error's last
line. Each record counts the step's attempts, against the retries it was
compiled with: a FAILED attempt with retries left may be followed by
another. A step the cache served writes nothing, since it did not run; a
step that was killed stays RUNNING. The exit step (kubeflow/steps/notify.py) and
`python -m commands.kubeflow runs` read these records.

The compiled spec tells each container its pipeline, task and retries
through the environment (PIPELINE_NAME, PIPELINE_TASK,
PIPELINE_TASK_RETRIES), which is not part of the open-source backend's
cache key (`cacheutils/cache.go`: image, command and args). Vertex AI's
key holds the environment too ("Configure execution caching"); these
values change only with a new compile, which changes the key anyway.
"""

import datetime
import json
import os
from typing import Dict, Optional

from kubeflow.steps import backend
from runtime import run_layout, storage

FOLDER = "status"
PIPELINE_ENV = run_layout.PIPELINE_ENV
TASK_ENV = "PIPELINE_TASK"
RETRIES_ENV = "PIPELINE_TASK_RETRIES"  # the task's retryPolicy, for retention
# KFP's switch for code inside a step (kfp/__init__.py; KFP sets it in its
# own components' containers): `kfp` imports no compiler and no API client.
KFP_RUNTIME_ENV = "_KFP_RUNTIME"
RUNNING, COMPLETE, FAILED = "RUNNING", "COMPLETE", "FAILED"


def run_of(executor_input: dict, task: str) -> Optional[run_layout.RunFolder]:
  """A compiled step's run folder, from its output artifacts' URIs, else its
  executor output file's: a step with no output artifact (a gate) has that
  file in its task's folder on Vertex AI and on the open-source backend
  from 2.15 (runtime/run_layout.py)."""
  output_file = executor_input.get("outputs", {}).get("outputFile") or ""
  uris = artifact_uris(executor_input)["wrote"] + [run_layout.uri_of(output_file)]
  return run_layout.locate(uris, os.environ.get(PIPELINE_ENV, ""), task)


def artifact_uris(executor_input: dict) -> Dict[str, list]:
  """{"read": input artifacts' URIs, "wrote": output artifacts' URIs} of an
  executor input, for the step's record (retention reads them).

  The launcher's log output is neither: a run the cache serves links the
  log of the run that executed the step, so retention must not delete it
  with that older run's outputs (nor raise a cache epoch for it)."""
  def uris(side):
    found = executor_input.get(side, {}).get("artifacts", {})
    own = [entry for key, entry in found.items() if key not in backend.launcher_outputs(found)]
    return sorted({a["uri"] for entry in own for a in entry.get("artifacts", [])
                   if a.get("uri")})
  return {"read": uris("inputs"), "wrote": uris("outputs")}


def write(folder: str, task: str, state: str, **fields) -> None:
  """Writes the task's record; a later write replaces it whole. It names
  the pipeline (PIPELINE_NAME): on Vertex AI a project's runs of every
  pipeline share one folder."""
  gfile = storage.gfile()
  gfile.makedirs(f"{folder}/{FOLDER}")
  pipeline = os.environ.get(PIPELINE_ENV)
  record = {"step": task, "state": state, **({"pipeline": pipeline} if pipeline else {}),
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(), **fields}
  with gfile.GFile(f"{folder}/{FOLDER}/{task}.json", "w") as f:
    f.write(json.dumps(record, sort_keys=True))


def read(folder: str) -> Dict[str, dict]:
  """task -> its record, for every step of the run that started."""
  gfile = storage.gfile()
  pattern = f"{folder}/{FOLDER}/*.json"
  found = {}
  for path in sorted(gfile.glob(pattern)):
    record = _load(path)
    found[record.get("step") or os.path.basename(path)[:-5]] = record
  return found


def read_one(folder: str, task: str) -> Optional[dict]:
  """The task's record in the run's folder, or None."""
  path = f"{folder}/{FOLDER}/{task}.json"
  return _load(path) if storage.gfile().exists(path) else None


def _load(path: str) -> dict:
  with storage.gfile().GFile(path) as f:
    return json.load(f)


def seconds(record: dict) -> Optional[float]:
  """How long the step took, from its record's start to its last write."""
  try:
    return (datetime.datetime.fromisoformat(record["time"])
            - datetime.datetime.fromisoformat(record["started"])).total_seconds()
  except (KeyError, ValueError):
    return None


def run_record(records: Dict[str, dict], pipeline: str, run: str):
  """The run's one record (store/metadata/run_record.py), as its steps' records
  tell it: each step that ran, in the order it started, with its outputs
  and parameters. A step the cache served wrote no record and is absent."""
  from store.metadata import run_record as rr
  ordered = sorted(records.items(), key=lambda item: item[1].get(
      "started", item[1].get("time", "")))
  outputs = {}
  for task, mine in ordered:
    for key, out in mine.get("outputs", {}).items():
      outputs[(task, key)] = rr.Found.reported(out.get("uri") or "", out.get("metadata", {}))
  nodes = {task: rr.Node(r["state"], seconds(r), "", r.get("message", ""))
           for task, r in ordered}
  return rr.RunRecord(
      pipeline=pipeline, run_id=run, started=(ordered[0][1].get("started", "")[:19]
                                              if ordered else ""),
      nodes=nodes, upstream={}, outputs=outputs,
      exec_properties={(node, name): records[node].get("inputs", {}).get(name)
                       for node, name in rr.EXEC_PROPERTIES if node in records})

"""What each compiled step did, written beside the run's artifacts.

The open-source backend keeps a step's state in ML Metadata and its error in
the pod's log, and tells an exit step neither on most versions: the final
status input (`taskFinalStatus`) is implemented from 2.14 on
(kubeflow/pipelines#11953, `driver/resolve.go`), and even there without the
error's message; the run-id placeholder from 2.5 on (#11599). What every
version from 2.0 gives a step is its output artifacts' URIs, which all lie
in the run's own folder, `<pipeline root>/<pipeline name>/<run id>/<task>/…`
(`metadata/client.go`: the run context's `pipeline_root`; the driver's
GenerateOutputURI).

So each step finds that folder from its outputs and writes
`status/<task>.json` there: RUNNING as it starts, with the URIs of the
artifacts it reads and writes, then COMPLETE with its
outputs' metadata and output parameters, or FAILED with its error's last
line. Each record counts the step's attempts, against the retries it was
compiled with: a FAILED attempt with retries left may be followed by
another. A step the cache served writes nothing, since it did not run; a
step that was killed stays RUNNING. The exit step (kubeflow/steps/notify.py) and
`python -m kubeflow runs` read these records.

The compiled spec tells each container its pipeline, task and retries
through the environment (PIPELINE_NAME, PIPELINE_TASK,
PIPELINE_TASK_RETRIES), which is not part of the
backend's cache key (`cacheutils/cache.go`: image, command and args).
"""

import datetime
import json
import os
import re
from typing import Dict, Iterable, Optional

FOLDER = "status"
PIPELINE_ENV = "PIPELINE_NAME"
TASK_ENV = "PIPELINE_TASK"
RETRIES_ENV = "PIPELINE_TASK_RETRIES"  # the task's retryPolicy, for retention
RUNNING, COMPLETE, FAILED = "RUNNING", "COMPLETE", "FAILED"


def run_folder(uris: Iterable[str], pipeline: str, task: str) -> Optional[str]:
  """`<pipeline root>/<pipeline>/<run id>` from the first output URI that lies
  in a run's folder for this task, or None."""
  pattern = re.compile(rf"^(.*/{re.escape(pipeline)}/[^/]+)/{re.escape(task)}/")
  for uri in uris:
    match = pattern.match(uri)
    if match:
      return match.group(1)
  return None


def artifact_uris(executor_input: dict) -> Dict[str, list]:
  """{"read": input artifacts' URIs, "wrote": output artifacts' URIs} of an
  executor input, for the step's record (retention reads them)."""
  def uris(side):
    listed = executor_input.get(side, {}).get("artifacts", {}).values()
    return sorted({a["uri"] for entry in listed for a in entry.get("artifacts", [])
                   if a.get("uri")})
  return {"read": uris("inputs"), "wrote": uris("outputs")}


def run_id(folder: str) -> str:
  return folder.rstrip("/").rsplit("/", 1)[-1]


def _gfile():
  import tensorflow as tf  # only when a record is read or written
  return tf.io.gfile


def write(folder: str, task: str, state: str, **fields) -> None:
  """Writes the task's record; a later write replaces it whole."""
  gfile = _gfile()
  gfile.makedirs(f"{folder}/{FOLDER}")
  record = {"step": task, "state": state,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(), **fields}
  with gfile.GFile(f"{folder}/{FOLDER}/{task}.json", "w") as f:
    f.write(json.dumps(record, sort_keys=True))


def read(folder: str) -> Dict[str, dict]:
  """task -> its record, for every step of the run that started."""
  gfile = _gfile()
  pattern = f"{folder}/{FOLDER}/*.json"
  found = {}
  for path in sorted(gfile.glob(pattern)):
    record = _load(path)
    found[record.get("step") or os.path.basename(path)[:-5]] = record
  return found


def read_one(folder: str, task: str) -> Optional[dict]:
  """The task's record in the run's folder, or None."""
  path = f"{folder}/{FOLDER}/{task}.json"
  return _load(path) if _gfile().exists(path) else None


def _load(path: str) -> dict:
  with _gfile().GFile(path) as f:
    return json.load(f)


def output_metadata(record: dict, key: str) -> dict:
  """The metadata the step reported for output `key` ({} if none)."""
  return record.get("outputs", {}).get(key, {}).get("metadata", {})


def _flag(value) -> Optional[bool]:
  return None if value is None else bool(float(value))


class Summary:
  """A run, as its steps' records tell it.

  Attributes:
    failed_step, message: the first step that failed or never finished.
    blessed: the Evaluator's verdict, if it ran in this run.
    pushed_version: the version the Pusher pushed (or found already there).
    serving_failure: why ServingCheck refused a blessed model, if it did.
  """

  def __init__(self, records: Dict[str, dict]):
    self.records = records
    ordered = sorted(records.values(), key=lambda r: r.get("started", r.get("time", "")))
    failed = [r for r in ordered if r["state"] in (FAILED, RUNNING)]
    self.failed_step = failed[0]["step"] if failed else None
    self.message = ""
    if failed:
      self.message = failed[0].get("message") or (
          "started but never finished: killed? (its pod's log says why)")
    evaluator = records.get("Evaluator", {})
    self.blessed = _flag(output_metadata(evaluator, "blessing").get("blessed"))
    check = output_metadata(records.get("ServingCheck", {}), "infra_blessing")
    self.serving_failure = (check.get("reason") or "failed") if (
        _flag(check.get("checked")) and not _flag(check.get("blessed"))) else None
    pushed = output_metadata(records.get("Pusher", {}), "pushed_model")
    self.pushed_version = (str(pushed.get("pushed_version")) if _flag(pushed.get("pushed"))
                           else None)

  @property
  def failed(self) -> bool:
    return self.failed_step is not None

  def push_line(self) -> str:
    """Whether a model was pushed, and which version, in words."""
    if self.pushed_version:
      return f"pushed version {self.pushed_version}"
    if self.failed:
      return "nothing pushed"
    if self.blessed is False:
      return "not blessed: nothing pushed"
    if self.serving_failure:
      return f"the serving check failed ({self.serving_failure}): nothing pushed"
    if "Pusher" not in self.records:
      return "nothing new to train on (served from the cache)"
    return "nothing pushed"

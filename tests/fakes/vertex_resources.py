"""What the STAND-IN Vertex AI Pipelines (tests/fakes/vertex_pipelines.py)
keeps and answers: PipelineJobs and Schedules as the v1 API returns them,
its lists and its refusals.

As the API's types say (`google/cloud/aiplatform_v1/types/` in
google-cloud-aiplatform 1.165.1, whose docstrings are the REST reference's
text), and what aiplatform was seen to send here:
- A job: `projects/<number>/locations/<region>/pipelineJobs/<id>`, the
  project NUMBER whichever the request named (aiplatform's own examples of
  a job's name carry a number, `pipeline_based_service.py` line 226,
  "projects/123/locations/us-central1/pipelineJobs/456"; and the steps'
  folders, named by the same number, are `<root>/<project number>/<job id>`,
  tfx `kubeflow_v2_run_executor.py` lines 83-84; that the API answers a
  request by project id with the number is the stand-in's reading of both); the id the request's
  `pipelineJobId`, of `[a-z][-a-z0-9]*` (`pipeline_service.py` lines
  252-258), else `<pipeline name>-<YYYYMMDDHHMMSS>` as aiplatform makes them
  (`pipeline_jobs.py` lines 269-274); a taken id 409. The spec, a Struct in
  the request, is read as the kfp PipelineSpec it is (numbers that are ints
  there are ints again). The root must be gs:// (400 "Invalid Cloud Storage
  URI for gcs_output_directory", the message users quote,
  GoogleCloudPlatform/vertex-ai-samples#424), its bucket must exist (400
  with the service-account message aiplatform quotes, `utils/gcs_utils.py`
  lines 365-367). What was sent is kept and returned as sent.
- Its states (`pipeline_state.py`): PENDING (queued: the stand-in runs one
  job at a time), RUNNING, SUCCEEDED, FAILED when a task failed (the
  error's code and wording are the stand-in's), CANCELLING, CANCELLED with
  error code 1 (`services/pipeline_service/client.py` lines 2271-2283).
- `jobDetail.taskDetails` (`pipeline_job.py` lines 411-502, 640-690): each
  task's name, id, times and state: SUCCEEDED, SKIPPED "due to cache hit",
  FAILED, NOT_TRIGGERED (downstream of a failure: its trigger policy is not
  met), CANCELLED; the CustomJob of its last attempt and the failed ones
  before it (`containerDetail.mainJob`, `failedMainJobs`), its execution,
  its outputs as Vertex ML Metadata artifacts with gs:// URIs. Sub-DAGs show
  their state once done. Not in the list view (lines 71-73).
- Lists: `filter` terms `field=value` or `!=`, joined by AND, on
  display_name, pipeline_name, pipeline_job_user_id, state and labels.KEY
  (`pipeline_service.py` lines 300-340; `:` and OR are refused here, to be
  noticed); `orderBy`, by default "create time in descending order" (lines
  350-365); pages of PAGE_SIZE (not documented).
- A schedule: `projects/<number>/locations/<region>/schedules/<id>`, ACTIVE,
  cron required; its run (`scheduled_run`) is the request's PipelineJob
  with `scheduleName` (`pipeline_job.py` lines 150-153), the label
  `vertex-ai-pipelines-run-billing-id` added (googleapis/python-aiplatform#2929),
  an id with the date in it (python-aiplatform#5086; the format above), and
  the schedule's display name when the request has none (not documented).
  `startedRunCount` and `lastScheduledRunResponse` are kept, COMPLETED at
  `maxRunCount`; `maxConcurrentActiveRunCount` active runs start no other
  (`schedule.py` lines 88-133: `maxConcurrentRunCount` limits starting
  requests, not running jobs); a PAUSED one starts none. (aiplatform's
  `resume(catch_up=...)` sends no catchUp, `schedules.py` line 133.)
"""

import itertools
import json
import os
import random
import re
import time
from typing import Dict, Optional

from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from tests.fakes.vertex_feeding import JobRun, now

JOB_ID = re.compile(r"^[a-z][-a-z0-9]{0,127}$")
TERM = re.compile(r'^\s*([\w.-]+)\s*(!=|=)\s*"?([^"]*)"?\s*$')
DONE = {"PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED"}
CANCELLED = {"code": 1, "message": "Pipeline job cancelled."}  # code 1: Code.CANCELLED
PAGE_SIZE = 5  # small, so that a client must follow nextPageToken
TASK_STATES = {"EXECUTED": "SUCCEEDED", "CACHED": "SKIPPED", "SKIPPED": "NOT_TRIGGERED",
               "FAILED": "FAILED", "COMPLETE": "SUCCEEDED"}  # kfp_backend's -> Vertex's


class ApiError(Exception):
  def __init__(self, code: int, status: str, message: str, details=()):
    super().__init__(f"{code} {status}: {message}")
    self.code, self.status, self.message, self.details = code, status, message, details


def denied(permission: str, resource: str, message: str) -> ApiError:
  """403 as Google's APIs answer it (aip.dev/193: an ErrorInfo naming the
  permission)."""
  return ApiError(403, "PERMISSION_DENIED", message, [{
      "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "IAM_PERMISSION_DENIED",
      "domain": "aiplatform.googleapis.com",
      "metadata": {"permission": permission, "resource": resource}}])


def to_s3(value):
  """THE substitution: gs:// as s3://, in every string of a JSON value."""
  return json.loads(json.dumps(value).replace("gs://", "s3://"))


def to_gs(value):
  return json.loads(json.dumps(value).replace("s3://", "gs://"))


def read_spec(sent: Dict) -> Dict:
  try:
    return json_format.MessageToDict(json_format.ParseDict(
        sent["pipelineSpec"], pipeline_spec_pb2.PipelineSpec()))
  except (KeyError, json_format.ParseError) as e:
    raise ApiError(400, "INVALID_ARGUMENT", f"Invalid pipeline_spec: {e}") from None


def check_root(job: Dict) -> str:
  root = job.get("runtimeConfig", {}).get("gcsOutputDirectory", "")
  if not root.startswith("gs://"):
    raise ApiError(400, "INVALID_ARGUMENT",
                   f"Invalid Cloud Storage URI for gcs_output_directory: {root}")
  return root


def generated_id(spec: Dict, taken) -> str:
  """`<pipeline name>-<YYYYMMDDHHMMSS>`, a suffix if that is taken; the
  time is local, as aiplatform's (`pipeline_jobs.py` lines 80-82:
  `datetime.datetime.now()`)."""
  base = "{}-{}".format(re.sub("[^-0-9a-z]+", "-", spec["pipelineInfo"]["name"].lower())
                        .strip("-"), time.strftime("%Y%m%d%H%M%S", time.localtime()))
  return next(name for n in itertools.count()
              if (name := f"{base}-{n}" if n else base) not in taken)


class Job:
  """The stand-in's record of one PipelineJob: `state`, `resource` (as GET
  returns it), `log_dir` (each step's log), `run` (vertex_feeding.JobRun)."""

  def __init__(self, vp, job_id: str, sent: Dict, spec: Dict, schedule: Optional[str]):
    self.id, self.sent, self.spec, self.vp, self.schedule = job_id, sent, spec, vp, schedule
    self.name = f"projects/{vp.number}/locations/{vp.region}/pipelineJobs/{job_id}"
    self.state, self.error = "PIPELINE_STATE_PENDING", None
    created = now()
    self.times = {"createTime": created, "updateTime": created}
    self.log_dir = os.path.join(vp.folder, "jobs", job_id)
    os.makedirs(self.log_dir)
    self.run = JobRun(job_id, self.name, to_s3(check_root(sent)), env={},
                      service_account=sent.get("serviceAccount") or vp.default_account,
                      network=sent.get("network", ""))

  def set(self, state: str, error: Optional[Dict] = None) -> None:
    self.state, self.error = state, error or self.error
    self.times["updateTime"] = now()
    if state == "PIPELINE_STATE_RUNNING":
      self.times["startTime"] = self.times["updateTime"]
    if state in DONE:
      self.times["endTime"] = self.times["updateTime"]

  @property
  def resource(self) -> Dict:
    """The PipelineJob as GET returns it (enums by name)."""
    return {**self.view(), "jobDetail": {"taskDetails": self._tasks()}}

  def view(self) -> Dict:
    """As the list returns it."""
    return {**self.sent, "name": self.name, "state": self.state, **self.times,
            **({"error": self.error} if self.error else {}),
            **({"scheduleName": self.schedule} if self.schedule else {})}

  def _tasks(self):
    with self.vp.backend.lock:
      details = dict(self.run.tasks)
      states = dict(self.run.result.states) if self.run.result else {}
    prefix = f"projects/{self.vp.number}/locations/{self.vp.region}/metadataStores/default"
    found = []
    for name, d in details.items():
      task = {"taskId": d.task_id, "taskName": name, "createTime": d.start_time,
              "startTime": d.start_time, "state": d.state,
              **({"endTime": d.end_time} if d.end_time else {})}
      if d.main_job:
        task["executorDetail"] = {"containerDetail": {"mainJob": d.main_job,
                                                      "failedMainJobs": d.failed_jobs}}
      if d.execution is not None:
        task["execution"] = {"name": f"{prefix}/executions/{d.execution}",
                             "state": "CACHED" if d.state == "SKIPPED" else "COMPLETE"}
      task["outputs"] = {key: {"artifacts": [{
          "name": a["name"], "uri": to_gs(a["uri"]), "schemaTitle": a["type"]["schemaTitle"],
          "metadata": a["metadata"], "state": "LIVE"}]} for key, a in d.outputs.items()}
      if d.error:
        task["error"] = {"code": 9, "message": d.error}
      found.append(task)
    for number, (name, state) in enumerate(states.items(), 1):  # sub-DAGs, tasks not started
      if name not in details:
        cancelled = self.run.cancelled.is_set() and state == "SKIPPED"
        found.append({"taskId": str(number), "taskName": name,
                      "state": "CANCELLED" if cancelled else TASK_STATES[state]})
    return found


def new_schedule(sent: Dict, number: str, region: str) -> Dict:
  if not sent.get("cron"):
    raise ApiError(400, "INVALID_ARGUMENT", "time_specification (cron) is required")
  # Schedule.cron: a cron tab of five fields after an optional "CRON_TZ=" or
  # "TZ=" zone (REST reference, projects.locations.schedules). The wording
  # of the refusal is the stand-in's own.
  if len(re.sub(r"^(CRON_)?TZ=\S+ +", "", sent["cron"].strip()).split()) != 5:
    raise ApiError(400, "INVALID_ARGUMENT", f"Invalid cron: {sent['cron']!r}")
  check_root(sent.get("createPipelineJobRequest", {}).get("pipelineJob", {}))
  created = now()
  return {**sent, "name": f"projects/{number}/locations/{region}/schedules/"
                          f"{random.getrandbits(62)}",
          "state": "ACTIVE", "createTime": created, "updateTime": created,
          "startTime": sent.get("startTime", created), "startedRunCount": "0"}


def scheduled_run(schedule: Dict, active: int) -> Optional[Dict]:
  """The PipelineJob the schedule's run sends, or None when it starts none."""
  limit = int(schedule.get("maxConcurrentActiveRunCount", 0))
  if schedule["state"] != "ACTIVE" or (limit and active >= limit):
    return None
  sent = json.loads(json.dumps(schedule["createPipelineJobRequest"]["pipelineJob"]))
  sent.setdefault("displayName", schedule["displayName"])
  sent["labels"] = {**sent.get("labels", {}),
                    "vertex-ai-pipelines-run-billing-id": str(random.getrandbits(60))}
  return sent


def started(schedule: Dict, response: str) -> None:
  """What the schedule keeps of a run it started (or tried to)."""
  schedule["startedRunCount"] = str(int(schedule.get("startedRunCount", 0)) + 1)
  schedule["lastScheduledRunResponse"] = {"scheduledRunTime": now(), "runResponse": response}
  if int(schedule.get("maxRunCount", 0)) and \
      int(schedule["startedRunCount"]) >= int(schedule["maxRunCount"]):
    schedule["state"] = "COMPLETED"


def pause(schedule: Dict, paused: bool, body: Dict) -> None:
  """ACTIVE to PAUSED and back; "Schedules in completed state cannot be
  paused or resumed" (`schedule.py` lines 162-166)."""
  wanted, before = ("PAUSED", "ACTIVE") if paused else ("ACTIVE", "PAUSED")
  if schedule["state"] != before:  # the wording is the stand-in's
    raise ApiError(400, "FAILED_PRECONDITION", f"The Schedule is {schedule['state']}")
  schedule["state"], schedule["updateTime"] = wanted, now()
  schedule["last" + ("Pause" if paused else "Resume") + "Time"] = schedule["updateTime"]
  if not paused:
    schedule["catchUp"] = bool(body.get("catchUp"))


def render(resource: Dict, kind, ints: bool) -> str:
  """As the API writes it: through the v1 type (an unknown field raises),
  no default values, enums as numbers when the client asks
  `$alt=json;enum-encoding=int` (aiplatform's REST transport always does)."""
  return kind.to_json(kind.from_json(json.dumps(resource)), use_integers_for_enums=ints,
                      always_print_fields_with_no_presence=False)


def matches(values: Dict[str, str], expression: str) -> bool:
  """Whether a resource's fields meet a filter of `field=value` terms."""
  for term in filter(None, expression.split(" AND ")):
    match = TERM.match(term)
    if not match or match.group(1) not in values and not match.group(1).startswith("labels."):
      raise ApiError(400, "INVALID_ARGUMENT", f"Unsupported filter (stand-in): {expression}")
    field, op, value = match.groups()
    if (values.get(field) == value) != (op == "="):
      return False
  return True


def page(items, query: Dict, order_fields: set, key: str) -> Dict:
  """Ordered (default "create_time desc") and paged by an offset token."""
  order = query.get("orderBy", "create_time desc")
  for part in reversed([p.split() for p in order.split(",") if p.strip()]):
    if part[0] not in order_fields:
      raise ApiError(400, "INVALID_ARGUMENT", f"Unsupported order_by field: {part[0]}")
    camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), part[0])
    items.sort(key=lambda r: r.get(camel, ""), reverse=part[-1] == "desc")
  size, start = int(query.get("pageSize") or PAGE_SIZE), int(query.get("pageToken") or 0)
  body = {key: items[start:start + size]} if items[start:start + size] else {}
  if start + size < len(items):
    body["nextPageToken"] = str(start + size)
  return body

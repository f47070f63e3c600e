"""A STAND-IN for Vertex AI Pipelines: the PipelineService and ScheduleService
of aiplatform v1 over REST, which the real `google-cloud-aiplatform` SDK
(1.165.1, the lock's) talks to on 127.0.0.1, and which runs a submitted
PipelineJob's container steps on this machine as Vertex feeds them.

    with StandInVertexPipelines(folder, s3_client, s3_env, project="user-project",
                                project_number="123456789012",
                                region="us-central1") as vp:
      # a process with vp.env runs aiplatform.init(project=..., location=...,
      #   api_endpoint=vp.endpoint, api_transport="rest"), then
      #   aiplatform.PipelineJob(...).submit(service_account=..., network=...)
      vp.wait(job_id); vp.jobs[job_id].resource; vp.fire(schedule_name)

Where each part lives: tests/fakes/vertex_resources.py (the jobs and
schedules as the API keeps and returns them, its lists and refusals),
tests/fakes/vertex_feeding.py (how a step is fed: layout, artifacts, cache,
retries, environment), tests/fakes/google_apis.py (the metadata server,
Cloud Storage's bucket API and Resource Manager, which aiplatform calls
before every submit). Here, what the service answers and who may ask:
- POST/GET `.../pipelineJobs`, GET `.../pipelineJobs/<id>`, POST
  `...:cancel`, POST/GET `.../schedules`, GET and DELETE `.../schedules/<id>`
  (a done Operation), POST `...:pause` and `...:resume`, under
  `/v1/projects/<project id or number>/locations/<region>`, as aiplatform's
  REST transport sends them; a body with a field the v1 type lacks 400.
- Auth: a bearer token from the metadata server (google-auth), else 401;
  another project or region 403 (the stand-in's own choice: Google answers
  a resource one may not see with 403, as Resource Manager does a project,
  but what Vertex answers for another region is not documented); a permission in `forbidden` 403 PERMISSION_DENIED naming it:
  `aiplatform.pipelineJobs.{create,get,list,cancel}`,
  `aiplatform.schedules.{create,get,list,delete}`, `aiplatform.schedules.update`
  to pause or resume (assumed: no narrower permission is documented),
  and `iam.serviceAccounts.actAs` on
  the service account a job runs as ("Users submitting jobs must have
  act-as permission on this run-as account", `pipeline_jobs.py` submit),
  which Vertex answers 400 INVALID_ARGUMENT "You do not have permission to
  act as service_account: ... (or it may not exist)."
  (googleapis/python-aiplatform#1073).
- A step's identity: the job's `serviceAccount` and `network` kept as sent;
  each step gets CLOUD_ML_PROJECT_ID, the project NUMBER, which Google's own
  SDK reads as Vertex's (aiplatform `initializer.py` lines 86-95, after
  googleapis/google-auth-library-python#924), and a metadata server of its
  job that names a TENANT project, not the user's (that issue's `...-tp`),
  and the job's service account, else the Compute Engine default one
  ("Configure your Google Cloud project for Vertex AI Pipelines"). Vertex's
  docs list no environment for pipeline steps; CLOUD_ML_REGION is not given
  (aiplatform reads it, `initializer.py` line 379, but nothing shows Vertex
  Pipelines sets it). `step_env` adds to every step's environment.

THE ONE THING THAT DIFFERS: storage. TensorFlow's gs:// cannot be pointed at
a local server here (TF 2.16's built-in has its endpoint fixed, and
tensorflow-io's plugin cannot replace it: "File system for gs already
registered"). So a job sent with a gs:// root runs on the S3 stand-in
(tests/fakes/s3_server.py): every `gs://` in the spec's strings (parameter
defaults and constants), the runtime parameters and the root is handed to
the steps as `s3://` (and the FUSE mount /gcs/ as /s3/), and each step gets
the S3 endpoint and keys, as Vertex gives a step its service account's
access to the bucket. The job's resource stays as sent, its artifacts'
URIs shown as gs://. Unproved here: that gs:// behaves as s3:// does (an
empty "folder", listing, renames), and Cloud Storage FUSE's reading.

Not modelled: pipeline templates (templateUri), inputArtifacts, the root
task Vertex lists for the pipeline itself and parentTaskId, pausing jobs,
schedule updates, catching up, cron (runs start only by `fire`),
allowQueueing, quotas, Cloud Logging, preflight validations.
"""

import http.server
import json
import os
import queue
import random
import re
import threading
import time
import urllib.parse
from typing import Dict, Optional

from google.cloud import aiplatform_v1

from tests.fakes import google_apis, google_storage
from tests.fakes import vertex_resources as api
from tests.fakes.kfp_backend import StepFailed
from tests.fakes.vertex_api import TOKEN
from tests.fakes.vertex_feeding import VertexBackend
from tests.fakes.vertex_resources import ApiError, Job

PARENT = r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
ROUTES = {"jobs": PARENT + r"/pipelineJobs(?:/(?P<id>[^/:]+))?(?P<verb>:cancel)?$",
          "schedules": PARENT + r"/schedules(?:/(?P<id>[^/:]+))?(?::(?P<verb>pause|resume))?$"}


class StandInVertexPipelines:
  """See the module's docstring. `jobs`: job id -> Job; `schedules`: name ->
  Schedule; `forbidden`: permissions not granted; `step_env`: added to each
  step's environment; `other_buckets`: other projects' buckets (see
  tests/fakes/google_storage.py); `backoff_scale`: what a retry's wait is multiplied by
  here (the lengths Vertex would wait are kept in the task's record)."""

  def __init__(self, folder: str, s3_client, s3_env: Dict[str, str],
               project: str = "user-project", project_number: str = "123456789012",
               region: str = "us-central1", backoff_scale: float = 1.0):
    self.folder, self.s3, self.s3_env = folder, s3_client, dict(s3_env)
    self.project, self.number, self.region = project, project_number, region
    self.backoff_scale = backoff_scale
    self.tenant = f"g{random.getrandbits(64):016x}-tp"
    self.jobs: Dict[str, Job] = {}
    self.schedules: Dict[str, Dict] = {}
    self.forbidden: set = set()
    self.step_env: Dict[str, str] = {}
    self.other_buckets: Dict[str, Optional[str]] = {}
    self.lock = threading.Lock()
    self.queue: "queue.Queue[Optional[Job]]" = queue.Queue()
    self.ready = threading.Event()

  def __enter__(self) -> "StandInVertexPipelines":
    os.makedirs(self.folder, exist_ok=True)
    handler = type("BoundHandler", (Handler,), {"vp": self})
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    self.server.daemon_threads = True
    threading.Thread(target=self.server.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{self.server.server_address[1]}"
    self.endpoint = f"http://{address}"
    self.resource_manager = google_apis.ResourceManager(self.folder, self.project, self.number,
                                                        TOKEN)
    gcloud = os.path.join(self.folder, "gcloud")  # no user's credentials found first
    os.makedirs(gcloud, exist_ok=True)
    # google-auth gives a metadata server 3 s to answer its ping; this one
    # is a thread of a busy test process (see tests/fakes/vertex_api.py).
    self.env = {"GCE_METADATA_HOST": address, "GCE_METADATA_IP": address,
                "GCE_METADATA_TIMEOUT": "60", "CLOUDSDK_CONFIG": gcloud,
                "STORAGE_EMULATOR_HOST": self.endpoint, "VERTEX_API_ENDPOINT": self.endpoint,
                **self.resource_manager.env}
    self.worker = threading.Thread(target=self._work, daemon=True)
    self.worker.start()
    self.ready.wait(120)
    return self

  def __exit__(self, *exc) -> None:
    for job in self.jobs.values():
      job.run.cancelled.set()
    self.queue.put(None)
    self.worker.join(120)
    self.server.shutdown()
    self.resource_manager.close()

  def wait(self, job_id: str, timeout: float = 1800) -> str:
    """The job's final state's name."""
    deadline = time.time() + timeout
    while self.jobs[job_id].state not in api.DONE:
      if time.time() > deadline:
        raise TimeoutError(f"{job_id} still {self.jobs[job_id].state} after {timeout} s")
      time.sleep(0.2)
    return self.jobs[job_id].state

  def create_job(self, sent: Dict, job_id: Optional[str], schedule: Optional[str] = None) -> Job:
    """Validates and queues a PipelineJob as the API's create does (the
    permissions aside). Raises ApiError."""
    spec = api.read_spec(sent)
    job_id = job_id or api.generated_id(spec, self.jobs)
    if not api.JOB_ID.match(job_id):
      raise ApiError(400, "INVALID_ARGUMENT", f"Invalid PipelineJob ID: {job_id}")
    bucket = api.check_root(sent)[len("gs://"):].split("/")[0]
    if bucket not in {b["Name"] for b in self.s3.list_buckets()["Buckets"]}:
      raise ApiError(400, "FAILED_PRECONDITION", (
          f"Failed to create pipeline job. Error: Service account `{self._account(sent)}` "
          "does not have `[storage.objects.get, storage.objects.create]` IAM permission(s) "
          f"to the bucket `{bucket}`. Please either copy the files to the Google Cloud "
          "Storage bucket owned by your project, or grant the required IAM permission(s) "
          "to the service account."))
    with self.lock:
      if job_id in self.jobs:
        raise ApiError(409, "ALREADY_EXISTS", f"PipelineJob {job_id} already exists")
      job = self.jobs[job_id] = Job(self, job_id, sent, spec, schedule)
    self.queue.put(job)
    return job

  def cancel(self, job: Job) -> None:
    if job.state in api.DONE:  # the wording is the stand-in's
      raise ApiError(400, "FAILED_PRECONDITION", f"Cannot cancel a job in {job.state}")
    job.run.cancelled.set()
    job.set("PIPELINE_STATE_CANCELLING")

  def fire(self, schedule_name: str) -> Optional[str]:
    """Starts the schedule's run now, as its cron would; returns its job id,
    or None when it starts none (not ACTIVE, at its active-run limit, or the
    create refused: then lastScheduledRunResponse says why)."""
    schedule = self.schedules[schedule_name]
    active = sum(j.schedule == schedule_name and j.state not in api.DONE
                 for j in self.jobs.values())
    sent = api.scheduled_run(schedule, active)
    if sent is None:
      return None
    try:
      job = self.create_job(sent, api.generated_id(api.read_spec(sent), self.jobs),
                            schedule=schedule_name)
    except ApiError as e:
      api.started(schedule, e.message)
      return None
    api.started(schedule, job.name)
    return job.id

  @property
  def default_account(self) -> str:
    """The project's Compute Engine default service account, which runs a
    job that names none (Vertex's docs, "Configure a service account")."""
    return f"{self.number}-compute@developer.gserviceaccount.com"

  def _account(self, sent: Dict) -> str:
    return sent.get("serviceAccount") or self.default_account

  def _work(self) -> None:
    """Runs the queued jobs, one at a time, in this thread (ML Metadata's)."""
    self.backend = VertexBackend(os.path.join(self.folder, "metadata"), self.s3,
                                 self.project, self.number, self.region)
    self.backend.backoff_scale = self.backoff_scale
    self.ready.set()
    while (job := self.queue.get()) is not None:
      if job.run.cancelled.is_set():
        job.set("PIPELINE_STATE_CANCELLED", api.CANCELLED)
      else:
        self._run(job)
    self.backend.close()

  def _run(self, job: Job) -> None:
    metadata = google_apis.MetadataServer(self.tenant, self._account(job.sent), TOKEN)
    job.run.env = {**self.s3_env, "CLOUD_ML_PROJECT_ID": self.number,
                   "GCE_METADATA_HOST": metadata.address, "GCE_METADATA_IP": metadata.address,
                   "GCE_METADATA_TIMEOUT": "60", **self.step_env}
    spec_path = os.path.join(job.log_dir, "pipeline_spec.json")
    with open(spec_path, "w") as f:
      json.dump(api.to_s3(job.spec), f)
    config = job.sent.get("runtimeConfig", {})
    job.set("PIPELINE_STATE_RUNNING")
    try:
      self.backend.run_job(job.run, spec_path, api.to_s3(config.get("parameterValues", {})),
                           job.log_dir, fail_fast=config.get("failurePolicy") ==
                           "PIPELINE_FAILURE_POLICY_FAIL_FAST")
      job.set("PIPELINE_STATE_SUCCEEDED")
    except StepFailed:
      failed = ", ".join(sorted(n for n, d in job.run.tasks.items() if d.state == "FAILED"))
      job.set(*(("PIPELINE_STATE_CANCELLED", api.CANCELLED) if job.run.cancelled.is_set() else
                ("PIPELINE_STATE_FAILED", {"code": 9, "message": "The DAG failed because some "
                                           f"tasks failed. The failed tasks are: [{failed}]."})))
    except Exception as e:  # noqa: BLE001  (the stand-in's own failure, shown on the job)
      job.set("PIPELINE_STATE_FAILED", {"code": 13, "message": f"stand-in error: {e!r}"})
    finally:
      metadata.close()


class Handler(google_apis.JsonHandler):
  vp: StandInVertexPipelines

  def _serve(self, method: str) -> None:
    url = urllib.parse.urlparse(self.path)
    query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
    if url.path.startswith("/computeMetadata") or url.path == "/":
      return google_apis.metadata(self, url.path, self.vp.project,
                                  f"submitter@{self.vp.project}.iam.gserviceaccount.com", TOKEN)
    if self.headers.get("Authorization") != f"Bearer {TOKEN}":
      return self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
    if url.path.startswith("/storage/v1/b"):
      return google_storage.storage(self, method, url, self.vp.s3, self.vp.number,
                                    self.vp.other_buckets)
    try:
      for kind, route in ROUTES.items():
        if match := re.match(route, url.path):
          ints = "enum-encoding=int" in query.get("$alt", "")
          return getattr(self, f"_{kind}")(method, match, query, ints)
      raise ApiError(404, "NOT_FOUND", f"no such method: {method} {url.path}")
    except ApiError as e:
      self.error(e.code, e.status, e.message, e.details)

  def _allow(self, permission: str, match, resource: str = "") -> None:
    vp = self.vp
    resource = resource or f"projects/{match['project']}/locations/{match['location']}"
    if permission in vp.forbidden or match["project"] not in (vp.project, vp.number) \
        or match["location"] != vp.region:
      raise api.denied(permission, resource, f"Permission '{permission}' denied on resource "
                       f"'//aiplatform.googleapis.com/{resource}' (or it may not exist).")

  def _sent(self, kind, account_of) -> Dict:
    """The request's body, read strictly; its run-as account's actAs checked."""
    try:
      sent = json.loads(api.render(json.loads(self.body()), kind, False))
    except Exception as e:  # noqa: BLE001  (the API answers a bad body with 400)
      raise ApiError(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. {e}") from None
    account = account_of(sent)
    if account and "iam.serviceAccounts.actAs" in self.vp.forbidden:
      # Vertex's answer: 400, not 403 (googleapis/python-aiplatform#1073), as
      # tests/fakes/vertex_api.py's CustomJobs answer it.
      raise ApiError(400, "INVALID_ARGUMENT", "You do not have permission to act as "
                     f"service_account: {account}. (or it may not exist).")
    return sent

  def _jobs(self, method: str, match, query: Dict, ints: bool) -> None:
    kind, vp = aiplatform_v1.PipelineJob, self.vp
    if method == "POST" and not match["id"]:
      self._allow("aiplatform.pipelineJobs.create", match)
      sent = self._sent(kind, lambda s: s.get("serviceAccount"))
      job = vp.create_job(sent, query.get("pipelineJobId"))
      return self.send(200, api.render(job.view(), kind, ints))
    if not match["id"]:
      self._allow("aiplatform.pipelineJobs.list", match)
      found = [job.view() for job in list(vp.jobs.values()) if api.matches({
          "display_name": job.sent.get("displayName"), "state": job.state,
          "pipeline_job_user_id": job.id, "pipeline_name": job.spec["pipelineInfo"]["name"],
          **{f"labels.{k}": v for k, v in job.sent.get("labels", {}).items()}},
          query.get("filter", ""))]
      return self._list(found, query, {"create_time", "update_time", "end_time", "start_time"},
                        "pipelineJobs", kind, ints)
    verb = "cancel" if match["verb"] else "get"
    self._allow(f"aiplatform.pipelineJobs.{verb}", match, match.group(0)[len("/v1/"):].split(":")[0])
    job = vp.jobs.get(match["id"])
    if job is None:
      raise ApiError(404, "NOT_FOUND", f"The PipelineJob does not exist: {match['id']}")
    if verb == "cancel":
      vp.cancel(job)
      return self.send(200, {})
    self.send(200, api.render(job.resource, kind, ints))

  def _schedules(self, method: str, match, query: Dict, ints: bool) -> None:
    kind, vp = aiplatform_v1.Schedule, self.vp
    if method == "POST" and not match["id"]:
      self._allow("aiplatform.schedules.create", match)
      sent = self._sent(kind, lambda s: s.get("createPipelineJobRequest", {}).get(
          "pipelineJob", {}).get("serviceAccount"))
      schedule = api.new_schedule(sent, vp.number, vp.region)
      vp.schedules[schedule["name"]] = schedule
      return self.send(200, api.render(schedule, kind, ints))
    if not match["id"]:
      self._allow("aiplatform.schedules.list", match)
      found = [s for s in list(vp.schedules.values()) if api.matches(
          {"display_name": s.get("displayName"), "state": s["state"]}, query.get("filter", ""))]
      return self._list(found, query, {"create_time", "start_time", "end_time", "next_run_time"},
                        "schedules", kind, ints)
    verb = match["verb"] or {"GET": "get", "DELETE": "delete"}.get(method)
    if verb is None:
      raise ApiError(404, "NOT_FOUND", f"no such method: {method} {match.group(0)}")
    self._allow(f"aiplatform.schedules.{'update' if match['verb'] else verb}", match,
                match.group(0)[len("/v1/"):].split(":")[0])
    schedule = next((s for n, s in vp.schedules.items() if n.endswith(f"/{match['id']}")), None)
    if schedule is None:
      raise ApiError(404, "NOT_FOUND", f"The Schedule does not exist: {match['id']}")
    if verb == "delete":  # a long-running operation, done at once
      del vp.schedules[schedule["name"]]
      return self.send(200, {"name": f"{schedule['name']}/operations/{random.getrandbits(62)}",
                             "done": True, "response": {
                                 "@type": "type.googleapis.com/google.protobuf.Empty"}})
    if verb in ("pause", "resume"):
      api.pause(schedule, verb == "pause", json.loads(self.body() or b"{}"))
      return self.send(200, {})
    self.send(200, api.render(schedule, kind, ints))

  def _list(self, found, query: Dict, order: set, key: str, kind, ints: bool) -> None:
    body = api.page(found, query, order, key)
    if body.get(key):
      body[key] = [json.loads(api.render(item, kind, ints)) for item in body[key]]
    self.send(200, body)

  def do_GET(self) -> None:
    self._serve("GET")

  def do_POST(self) -> None:
    self._serve("POST")

  def do_PUT(self) -> None:
    self._serve("PUT")

  def do_DELETE(self) -> None:
    self._serve("DELETE")

"""A STAND-IN for Vertex AI's JobService (aiplatform v1, over REST) and for
the Compute Engine metadata server a Vertex AI Pipelines step gets its
project and token from. For trainer/jobs/vertex.py's tests.

No Vertex AI runs here. The real `google-cloud-aiplatform` client (REST
transport) and `google-auth` talk to this server on 127.0.0.1: the step's
environment names it in VERTEX_API_ENDPOINT (trainer/jobs/vertex.py) and in
GCE_METADATA_HOST/GCE_METADATA_IP (google-auth's own override).

As Vertex AI does, by its API reference and its training docs:
- create, get and list (with a `labels.KEY="VALUE"` filter) of CustomJobs
  under `projects/P/locations/L`, what trainer/jobs/vertex.py calls; a body
  with a field the API does not have answers 400; a missing job 404; an
  unauthenticated call 401; a permission not granted 403 PERMISSION_DENIED
  naming it (`forbidden`);
- a job is JOB_STATE_PENDING, then JOB_STATE_RUNNING once its replicas run:
  one process per replica of each worker pool, running the pool's command
  with its env plus TF_CONFIG (`chief` for pool 0, `worker` for pool 1,
  `ps` for pool 2), CLUSTER_SPEC (`workerpoolN`) and the hosts
  `workerpoolN-R:2222`;
- every replica exiting 0 succeeds the job; the first that exits otherwise
  fails it, the others stopped, with "The replica workerpoolN-R exited with
  a non-zero status of C.";
- a replica's VM preempted (`preempt`): Vertex restarts the replica, and
  with `scheduling.restart_job_on_worker_restart` (which the launcher sets)
  every replica; the job goes on;
- a busy API's answers, injected (`blips`): 429 RESOURCE_EXHAUSTED, 500
  INTERNAL, 503 UNAVAILABLE in Google's JSON error shape (google.rpc.Code's
  names; the messages are the canonical ones, Vertex's own wording varies),
  a connection reset before any answer, and a create whose job is made but
  whose answer is lost to a reset;
- a job's project and region are its URL's (`CustomJobRun.project`,
  `.region`); its `service_account` and `network` are kept as sent; a
  network not of the form `projects/<number>/global/networks/<name>`
  (CustomJobSpec.network, aiplatform_v1 types/custom_job.py lines 212-221
  at google-cloud-aiplatform 1.165.1) answers 400 INVALID_ARGUMENT, in the
  stand-in's words (Vertex's are not known here); so does a service
  account the caller may not act as (`no_act_as`), in the words Vertex
  answers a PipelineJob so (googleapis/python-aiplatform#1073).

As a Vertex AI Pipelines step is fed (`start_step`):
- the metadata server names Vertex's tenant project, not the user's
  (googleapis/google-auth-library-python#924: `gbd40bc90c7804989-tp`);
  CLOUD_ML_PROJECT_ID is the user's project number
  (googleapis/python-aiplatform#852); no CLOUD_ML_REGION;
- a task's input parameter that is one of Vertex's placeholders for its
  PipelineJob is the PipelineJob's value, the service account the default
  one when the job names none, the network "" when it names none
  (kubeflow/pipelines components/google-cloud/google_cloud_pipeline_components/
  _placeholders.py lines 18-35 at 7b70c7b); `{{$.inputs.parameters['N']}}`
  in the command is that parameter's value (as TFX compiles its container
  components for Vertex: tfx 1.16 orchestration/kubeflow/v2/step_builder.py
  lines 90-126).

The one thing that differs: host names do not resolve here, so each is
mapped to a port on 127.0.0.1 in TRAIN_HOST_ALIASES (trainer/jobs/roles.py).
Not modelled: machines, accelerators, images (the command runs in this
venv), quotas, the job's timeout, how often Vertex restarts a preempted
replica before it fails the job, Cloud Logging. google-auth's regional
access boundary lookup (iamcredentials.googleapis.com, in a background
thread) finds no network here; google-auth goes on without it.
"""

import datetime
import http.server
import itertools
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import urllib.parse
from typing import Dict, List, Optional

from google.cloud import aiplatform_v1

from tests.conftest import REPO
from tests.fakes import google_apis
from tests.fakes.training_engines import free_port

PROJECT = "stand-in-project"  # the user's, where the PipelineJob runs
PROJECT_NUMBER = "123456789012"
TENANT_PROJECT = "a1b2c3d4e5f6a7b8c-tp"  # Vertex's, that the metadata server names
REGION = "us-central1"
# With no service account of its own a PipelineJob runs as the Compute
# Engine default one (Vertex docs, "Configure your Google Cloud project for
# Vertex AI Pipelines").
DEFAULT_ACCOUNT = f"{PROJECT_NUMBER}-compute@developer.gserviceaccount.com"
PIPELINE = {"project": PROJECT, "location": REGION, "serviceAccount": "", "network": ""}
PLACEHOLDERS = {"{{$.pipeline_google_cloud_project_id}}": "project",
                "{{$.pipeline_google_cloud_location}}": "location",
                "{{$.pipeline_service_account}}": "serviceAccount",
                "{{$.pipeline_network}}": "network"}
INPUT = re.compile(r"\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}")
NETWORK = re.compile(r"^projects/\d+/global/networks/[a-z]([-a-z0-9]*[a-z0-9])?$")
TOKEN = "stand-in-token"
JOBS = re.compile(r"^/v1/(projects/[^/]+/locations/[^/]+)/customJobs(?:/(\d+))?$")
LABEL_FILTER = re.compile(r'^labels\.([\w-]+)="([^"]*)"$')
State = aiplatform_v1.JobState


class Refused(ValueError):
  """A CustomJob the API answers 400 INVALID_ARGUMENT, with why."""


def resolved_command(trainer: Dict, pipeline: Dict[str, str]) -> List[str]:
  """The compiled step's command as Vertex AI Pipelines runs it, for the
  PipelineJob `pipeline` (PIPELINE's keys)."""
  values = {}
  for name, given in trainer["task"].get("inputs", {}).get("parameters", {}).items():
    value = given.get("runtimeValue", {}).get("constant")
    if value in PLACEHOLDERS:
      value = pipeline[PLACEHOLDERS[value]] or (
          DEFAULT_ACCOUNT if PLACEHOLDERS[value] == "serviceAccount" else "")
    values[name] = value
  return [INPUT.sub(lambda m: str(values[m.group(1)]), part)
          for part in trainer["container"]["command"]]


def compiled_trainer(config=None) -> Dict:
  """The Trainer step as kubeflow/compile/train_job.py compiles it for
  `config` (by default two workers on vertex): {"task", "container"}."""
  import types

  from kubeflow.compile import train_job
  config = config or types.SimpleNamespace(train_workers=2, train_engine="vertex")
  spec = {"root": {"dag": {"tasks": {"Trainer": {"componentRef": {"name": "Trainer"}}}}},
          "components": {"Trainer": {"executorLabel": "Trainer_executor"}},
          "deploymentSpec": {"executors": {"Trainer_executor": {"container": {
              "command": ["python", "-m", "kubeflow.steps.entrypoint"]}}}}}
  train_job.wire_vertex_pipeline(spec, config)
  return {"task": spec["root"]["dag"]["tasks"]["Trainer"],
          "container": spec["deploymentSpec"]["executors"]["Trainer_executor"]["container"]}


def command_env(command: List[str]) -> Dict[str, str]:
  """What `env NAME=VALUE ... PROGRAM` sets for PROGRAM (coreutils' env)."""
  if command[:1] != ["env"]:
    return {}
  return dict(part.split("=", 1) for part in itertools.takewhile(
      lambda part: "=" in part, command[1:]))


def _now() -> datetime.datetime:
  return datetime.datetime.now(datetime.timezone.utc)


class CustomJobRun(threading.Thread):
  """One CustomJob's replicas, as local processes, and its state."""

  def __init__(self, job: aiplatform_v1.CustomJob, log_dir: str, base_env: Dict[str, str]):
    super().__init__(daemon=True)
    self.job, self.log_dir, self.base_env = job, log_dir, base_env
    self.project, self.region = job.name.split("/")[1:4:2]  # from the URL it was created at
    self.procs: Dict[str, subprocess.Popen] = {}  # replica name -> process
    self.lock = threading.Lock()
    self._stop = threading.Event()

  def _set(self, state, message: str = "") -> None:
    with self.lock:
      self.job.state = state
      self.job.update_time = _now()
      if state == State.JOB_STATE_RUNNING:
        self.job.start_time = _now()
      if state in (State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED):
        self.job.end_time = _now()
      if message:
        self.job.error = {"code": 3, "message": message}

  def run(self) -> None:
    pools = self.job.job_spec.worker_pool_specs
    hosts = [[f"workerpool{p}-{r}:2222" for r in range(pool.replica_count)]
             for p, pool in enumerate(pools)]
    cluster = {job: hosts[p] for p, job in enumerate(("chief", "worker", "ps"))
               if p < len(hosts) and hosts[p]}
    aliases = {h.split(":")[0]: f"127.0.0.1:{free_port()}" for pool in hosts for h in pool}
    self.specs = {}  # replica -> (command, env)
    for p, pool in enumerate(pools):
      for r in range(pool.replica_count):
        env = {**self.base_env, **{e.name: e.value for e in pool.container_spec.env},
               "TF_CONFIG": json.dumps({
                   "cluster": cluster, "environment": "cloud",
                   "task": {"type": ("chief", "worker", "ps")[p], "index": r, "trial": ""}}),
               "CLUSTER_SPEC": json.dumps({
                   "cluster": {f"workerpool{i}": h for i, h in enumerate(hosts)},
                   "environment": "cloud", "task": {"type": f"workerpool{p}", "index": r}}),
               "TRAIN_HOST_ALIASES": json.dumps(aliases)}
        command = list(pool.container_spec.command) + list(pool.container_spec.args)
        if command[0] == "python":  # the image's python is this venv's
          command[0] = sys.executable
        self.specs[f"workerpool{p}-{r}"] = (command, env)
    for name in self.specs:
      self._start(name)
    self._set(State.JOB_STATE_RUNNING)
    while not self._stop.wait(0.2):
      with self.lock:  # not while a preemption restarts replicas
        codes = {name: proc.poll() for name, proc in self.procs.items()}
      failed = [(name, code) for name, code in codes.items() if code not in (None, 0)]
      if failed:
        name, code = failed[0]
        self.kill()
        return self._set(State.JOB_STATE_FAILED, (
            f"The replica {name} exited with a non-zero status of "
            f"{128 - code if code < 0 else code}. To find out more about why your job exited "
            "please check the logs: https://console.cloud.google.com/logs/viewer"))
      if all(code == 0 for code in codes.values()):
        return self._set(State.JOB_STATE_SUCCEEDED)

  def _start(self, name: str) -> None:
    command, env = self.specs[name]
    with open(os.path.join(self.log_dir, f"{name}.log"), "a") as log:
      self.procs[name] = subprocess.Popen(command, env=env, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True)

  def preempt(self, name: str) -> List[str]:
    """A replica's VM is preempted, and Vertex restarts the replica on a new
    one; with `scheduling.restart_job_on_worker_restart` every replica of the
    job restarts with it (CustomJob's Scheduling, aiplatform v1 API
    reference). A restart is no failure of the job. Returns the replicas
    restarted."""
    restarted = (list(self.specs) if self.job.job_spec.scheduling.restart_job_on_worker_restart
                 else [name])
    with self.lock:
      for replica in restarted:
        proc = self.procs[replica]
        if proc.poll() is None:
          os.killpg(proc.pid, signal.SIGKILL)
          proc.wait()
        self._start(replica)
    return restarted

  def kill(self) -> None:
    for proc in self.procs.values():
      if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

  def stop(self) -> None:
    """The stand-in's end: its replicas go with it."""
    self._stop.set()
    self.kill()


class StandInVertex:
  """`with StandInVertex(folder) as vertex:`; replicas' logs go to
  `folder`; `env` is what a Vertex AI Pipelines step would know."""

  def __init__(self, folder: str):
    self.folder = folder
    self.runs: Dict[str, CustomJobRun] = {}  # job name -> its run
    self.forbidden: set = set()  # permissions not granted, as aiplatform.customJobs.create
    self.no_act_as: set = set()  # service accounts the caller may not act as
    # The next calls' transient answers, in order: (call, answer); call is
    # create, get or list, answer 429, 500, 503, "reset" (no answer), or for
    # create "made, then reset" (the job made, its answer lost).
    self.blips: List[tuple] = []
    self.ids = itertools.count(4711)
    self.base_env = {k: v for k, v in os.environ.items() if k not in (
        "TF_CONFIG", "TF_USE_LEGACY_KERAS", "GOOGLE_APPLICATION_CREDENTIALS")}
    self.base_env["PYTHONPATH"] = REPO

  def __enter__(self) -> "StandInVertex":
    handler = type("BoundHandler", (Handler,), {"vertex": self})
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    self.server.daemon_threads = True
    threading.Thread(target=self.server.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{self.server.server_address[1]}"
    gcloud = os.path.join(self.folder, "gcloud")  # no user's credentials found first
    os.makedirs(gcloud, exist_ok=True)
    # google-auth gives the metadata server 3 s to answer its first ping
    # (compute_engine/_metadata.py line 107) and then decides it is not on
    # Google Cloud: "no Google credentials here". A VM's metadata server is
    # on the host; this one is a thread of a test process on a machine
    # that may be busy (test_a_vertex_call_not_granted_is_one_line failed
    # so once, and does so with a 4 s answer), so it is given a minute.
    self.env = {"VERTEX_API_ENDPOINT": f"http://{address}", "CLOUD_ML_PROJECT_ID": PROJECT_NUMBER,
                "GCE_METADATA_HOST": address, "GCE_METADATA_IP": address,
                "GCE_METADATA_TIMEOUT": "60", "CLOUDSDK_CONFIG": gcloud}
    return self

  def __exit__(self, *exc) -> None:
    for run in self.runs.values():
      run.stop()
    self.server.shutdown()

  def start_step(self, inputs: str, pod: Optional[Dict] = None, trainer: Optional[Dict] = None,
                 pipeline: Optional[Dict[str, str]] = None) -> subprocess.Popen:
    """The Trainer step's launching half (tests/trainer_step.py) on `inputs`,
    as a Vertex AI Pipelines step runs it; its output piped. `pod` is its
    TRAIN_JOB_POD; `trainer` the compiled step (`compiled_trainer()`'s by
    default), run for a PipelineJob with `pipeline`'s settings (PIPELINE's
    by default)."""
    command = resolved_command(trainer or compiled_trainer(), {**PIPELINE, **(pipeline or {})})
    pod = pod or {"image": "us-docker.pkg.dev/p/r/tfrecord-pipeline:test",
                  "env": {"STAND_IN": "1"}}
    env = {**self.base_env, **self.env, "TRAIN_JOB_POD": json.dumps(pod),
           **command_env(command)}
    return subprocess.Popen([sys.executable, "-m", "tests.trainer_step", inputs],
                            cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)

  def replicas(self) -> List[str]:
    """Every replica started, of every job, by name."""
    return [name for run in self.runs.values() for name in run.procs]

  def replica_log(self, name: str) -> str:
    path = os.path.join(self.folder, f"{name}.log")
    return open(path, errors="replace").read() if os.path.exists(path) else ""

  def create(self, parent: str, body: bytes) -> aiplatform_v1.CustomJob:
    job = aiplatform_v1.CustomJob.from_json(body)  # strict: an unknown field raises
    network, account = job.job_spec.network, job.job_spec.service_account
    if network and not NETWORK.match(network):
      raise Refused(f"Invalid network {network!r}: expected "
                    "projects/{project_number}/global/networks/{network_name}")
    if account in self.no_act_as:
      raise Refused(f"You do not have permission to act as service_account: {account}. "
                    "(or it may not exist).")
    job.name = f"{parent}/customJobs/{next(self.ids)}"
    job.state, job.create_time = State.JOB_STATE_PENDING, _now()
    run = self.runs[job.name] = CustomJobRun(job, self.folder, self.base_env)
    run.start()
    return job


BLIPS = {429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
         500: ("INTERNAL", "Internal error encountered."),
         503: ("UNAVAILABLE", "The service is currently unavailable.")}


class Handler(google_apis.JsonHandler):
  vertex: StandInVertex

  def _reset(self) -> None:
    """The connection dropped before an answer: a TCP reset on close."""
    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    self.close_connection = True

  def _blip(self, call: str) -> Optional[object]:
    """The injected answer for this call, if one is next: already sent,
    except "made, then reset", which the caller carries out."""
    blips = self.vertex.blips
    if not blips or blips[0][0] != call:
      return None
    _, answer = blips.pop(0)
    if answer == "reset":
      self._reset()
    elif answer in BLIPS:
      self.error(answer, *BLIPS[answer])
    return answer

  def _job(self, job: aiplatform_v1.CustomJob) -> dict:
    with self.vertex.runs[job.name].lock:
      return json.loads(aiplatform_v1.CustomJob.to_json(job))

  def _metadata(self, path: str) -> None:
    """The metadata server: what google-auth asks a Compute Engine VM."""
    flavor = {"Metadata-Flavor": "Google"}
    if self.headers.get("Metadata-Flavor") != "Google":
      return self.send(403, "missing Metadata-Flavor: Google", "text/plain")
    answers = {
        "": "", "/computeMetadata/v1/project/project-id": TENANT_PROJECT,
        "/computeMetadata/v1/universe/universe-domain": "googleapis.com",
        "/computeMetadata/v1/instance/service-accounts/default/": json.dumps({
            "aliases": ["default"], "email": DEFAULT_ACCOUNT,
            "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}),
        "/computeMetadata/v1/instance/service-accounts/default/token": json.dumps({
            "access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"})}
    if path.rstrip("/") == "" or path in answers:
      body = answers.get(path, "")
      return self.send(200, body, "application/json" if body.startswith("{") else
                        "application/text", flavor)
    self.send(404, "not found", "text/plain", flavor)

  def _allowed(self, permission: str, resource: str) -> bool:
    if self.headers.get("Authorization") != f"Bearer {TOKEN}":
      self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
      return False
    if permission in self.vertex.forbidden:
      self.error(403, "PERMISSION_DENIED", f"Permission '{permission}' denied on resource "
                  f"'//aiplatform.googleapis.com/{resource}' (or it may not exist).")
      return False
    return True

  def do_GET(self) -> None:
    url = urllib.parse.urlparse(self.path)
    if not url.path.startswith("/v1/"):
      return self._metadata(url.path)
    match = JOBS.match(url.path)
    if not match:
      return self.error(404, "NOT_FOUND", f"no such method: GET {url.path}")
    parent, number = match.group(1), match.group(2)
    if self._blip("get" if number else "list"):
      return
    if number:
      if not self._allowed("aiplatform.customJobs.get", url.path[4:]):
        return
      run = self.vertex.runs.get(f"{parent}/customJobs/{number}")
      if run is None:
        return self.error(404, "NOT_FOUND", f"The CustomJob does not exist: {url.path[4:]}")
      return self.send(200, self._job(run.job))
    if not self._allowed("aiplatform.customJobs.list", parent):
      return
    query = urllib.parse.parse_qs(url.query)
    wanted = query.get("filter", [""])[0]
    label = LABEL_FILTER.match(wanted)
    if wanted and not label:
      return self.error(400, "INVALID_ARGUMENT", f"Unsupported filter: {wanted}")
    jobs = [run.job for name, run in self.vertex.runs.items() if name.startswith(parent + "/")
            and (not label or run.job.labels.get(label.group(1)) == label.group(2))]
    self.send(200, {"customJobs": [self._job(job) for job in jobs]} if jobs else {})

  def do_POST(self) -> None:
    url = urllib.parse.urlparse(self.path)
    match = JOBS.match(url.path)
    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
    if not match or match.group(2):
      return self.error(404, "NOT_FOUND", f"no such method: POST {url.path}")
    parent = match.group(1)
    blip = self._blip("create")
    if blip and blip != "made, then reset":
      return
    if not self._allowed("aiplatform.customJobs.create", parent):
      return
    try:
      job = self.vertex.create(parent, body)
    except Refused as e:
      return self.error(400, "INVALID_ARGUMENT", str(e))
    except Exception as e:  # noqa: BLE001  (the API answers a bad body with 400)
      return self.error(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. {e}")
    if blip:
      return self._reset()
    self.send(200, self._job(job))



"""Vertex AI: the workers as a CustomJob.

`worker_pool_specs[0]` is the primary (one replica), `[1]` the other
workers; Vertex sets TF_CONFIG (`chief`, `worker`) and CLUSTER_SPEC itself,
so the workers need nothing from the launcher but the command. The job is
labelled with its name: a retried step finds it by that label and
reattaches instead of starting a second, unless it ended badly (failed,
cancelled, expired): then a new one starts, named for its attempt. Vertex restarts a worker whose VM
was preempted (`restart_job_on_worker_restart` restarts them all, which
MultiWorkerMirroredStrategy needs); they resume from the checkpoints under
the Trainer's output, which must then be gs://.

Each worker gets the Trainer's GPUs (`--resource Trainer:gpus=N,gpu_type=
NVIDIA_TESLA_T4`, an accelerator type as Vertex names it), a machine type
(`--train-machine-type`, default: the machine family the GPU attaches to,
vertex_machines.py; n1-standard-4 without one) and `--env`. Kubernetes
secrets (`--secret-env`) do not exist there: a CustomJob reaches Google
Cloud as its service account. Its logs are in Cloud Logging; the step's
log links the job's page and says each change of the job's state.

Where the job runs and as whom (`placement`): the compile flags
(`--train-project`, `--train-region`, `--train-service-account`,
`--train-network`, in TRAIN_JOB_POD), else the PipelineJob's own, which
Vertex AI Pipelines resolves for the step (PIPELINE_ENV, wired by
kubeflow/compile/train_job.py `wire_vertex_pipeline`). Never the project
google-auth finds: on a Vertex AI Pipelines step the metadata server names
Vertex's tenant project (googleapis/google-auth-library-python#924).

The client speaks REST (not gRPC) to the region's host as aiplatform names
it (`vertex_calls.api_endpoint`: `<region>-aiplatform.googleapis.com`, `us`'s
and `global`'s their own), or to VERTEX_API_ENDPOINT when set (a Private Service Connect endpoint, or
tests/fakes/vertex_api.py's stand-in: `http://127.0.0.1:PORT`).
"""

import functools
import logging
import os
import re
import time
from typing import Dict, List, Optional

from trainer.jobs import vertex_calls, vertex_machines
from trainer.jobs.job import ClusterError, Job, JobFailed

log = logging.getLogger("absl")
LABEL = "tfrecord-pipeline-job"
ENDPOINT_ENV = "VERTEX_API_ENDPOINT"
POLL_SECONDS = 10  # 6 reads a minute: far inside Vertex's quota; a step ends soon after
DONE = {"JOB_STATE_SUCCEEDED": "succeeded", "JOB_STATE_FAILED": "failed",
        "JOB_STATE_CANCELLED": "failed", "JOB_STATE_EXPIRED": "failed"}
# A job still CANCELLING counts as live: its replicas may still write the
# checkpoints a new job would read; the retried step waits for it to end.
ENDED_BADLY = ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")
# TRAIN_JOB_POD key -> the variable holding the PipelineJob's own value, as
# Vertex AI Pipelines resolved it for the step (train_job.py wires them).
PIPELINE_ENV = {"project": "VERTEX_PIPELINE_PROJECT", "region": "VERTEX_PIPELINE_LOCATION",
                "serviceAccount": "VERTEX_PIPELINE_SERVICE_ACCOUNT",
                "network": "VERTEX_PIPELINE_NETWORK"}
# Set by Vertex AI in a pipeline step and a CustomJob to the user's project
# *number* (googleapis/python-aiplatform#852; aiplatform's initializer.py
# reads it so, lines 88-94 at 1.165.1); or by the user with --env.
PROJECT_ENV = "CLOUD_ML_PROJECT_ID"
# --env, in the order aiplatform reads them (initializer.py@1.165.1 line 379).
REGION_ENVS = ("GOOGLE_CLOUD_REGION", "CLOUD_ML_REGION")


def _resolved(value: Optional[str]) -> Optional[str]:
  """A value Vertex AI Pipelines filled in, or None. The open-source backend
  leaves a placeholder it does not know as it is (kubeflow/pipelines
  `backend/src/v2/driver/driver.go`@2.5.0 line 1655, `resolve.go`@2.17.0
  line 451: `default: v = val`)."""
  return value if value and "{{$" not in value else None


def placement(pod: Dict, env=os.environ) -> Dict[str, str]:
  """Where the CustomJob runs and as whom: `project`, `region`, and
  `serviceAccount` and `network` when known.

  Each is the compile flag's (`pod`, TRAIN_JOB_POD), else the PipelineJob's
  (PIPELINE_ENV); the project else CLOUD_ML_PROJECT_ID, the region else
  `--env GOOGLE_CLOUD_REGION` or `CLOUD_ML_REGION`, in lower case as
  aiplatform sends it. No service account: Vertex's Custom Code Service
  Agent; no network: not peered.

  Raises:
    ClusterError: no project or no region, in one line. TFX's own Vertex
      client refuses to train without a region too
      (tfx/extensions/google_cloud_ai_platform/training_clients.py line 296).
  """
  found = {key: pod.get(key) or _resolved(env.get(name)) for key, name in PIPELINE_ENV.items()}
  found["project"] = found["project"] or env.get(PROJECT_ENV)
  found["region"] = (found["region"] or next((env[n] for n in REGION_ENVS if env.get(n)),
                                              "")).lower() or None
  for key, flag in (("project", "--train-project PROJECT"), ("region", "--train-region REGION")):
    if not found[key]:
      raise ClusterError(f"Vertex AI: no {key} for the Trainer's CustomJob: compile with "
                         f"{flag} (a Vertex AI Pipelines run names its own)")
  return {key: value for key, value in found.items() if value}


def body(job: Job, where: Optional[Dict[str, str]] = None) -> Dict:
  """The CustomJob, as aiplatform_v1's JSON form; `where` is `placement`'s."""
  pod = job.pod
  gpus = (pod.get("resources") or {}).get("gpus")
  machine = {"machine_type": pod.get("machineType") or vertex_machines.machine_for(
      (pod.get("resources") or {}).get("gpu_type"), gpus or 0)}
  if gpus:
    machine.update(accelerator_type=pod["resources"].get("gpu_type"), accelerator_count=gpus)
  container = {"image_uri": pod.get("image", ""), "command": job.command,
               "env": [{"name": k, "value": v} for k, v in sorted(pod.get("env", {}).items())]}
  pools = [{"machine_spec": machine, "replica_count": 1, "container_spec": container}]
  if job.workers > 1:
    pools.append({"machine_spec": machine, "replica_count": job.workers - 1,
                  "container_spec": container})
  scheduling = {"restart_job_on_worker_restart": True}
  if job.timeout:
    scheduling["timeout"] = f"{int(job.timeout)}s"
  spec = {"worker_pool_specs": pools, "scheduling": scheduling}
  # CustomJobSpec's own field names (aiplatform_v1 types/custom_job.py).
  for key, field in (("serviceAccount", "service_account"), ("network", "network")):
    if (where or {}).get(key):
      spec[field] = where[key]
  return {"display_name": job.name, "labels": {LABEL: job.name}, "job_spec": spec}


def _client(region: str, env=os.environ):
  import google.auth
  from google.cloud import aiplatform_v1
  endpoint = env.get(ENDPOINT_ENV) or vertex_calls.api_endpoint(region)
  try:  # the client asks google-auth for credentials (not for a project)
    return aiplatform_v1.JobServiceClient(client_options={"api_endpoint": endpoint},
                                          transport="rest")
  except google.auth.exceptions.DefaultCredentialsError:
    raise ClusterError("Vertex AI: no Google credentials here: run the step on Vertex AI "
                       "Pipelines or GKE with a service account, or set "
                       "GOOGLE_APPLICATION_CREDENTIALS") from None


def _jobs(client, parent: str, name: str) -> List:
  """Every CustomJob this step created, in any state."""
  # `filter` exists only on the request, not as a keyword of the method.
  return list(client.list_custom_jobs(request={"parent": parent,
                                               "filter": f'labels.{LABEL}="{name}"'},
                                      timeout=vertex_calls.CALL_TIMEOUT))


def _existing(jobs: List) -> Optional[object]:
  """The job a retried step reattaches to: one still queued, pending,
  running or already succeeded. A job that ended badly (failed, cancelled,
  expired) leaves room for a new one, or a retried step could never train
  again. ListCustomJobs has no order, so the state decides, not the place."""
  live = [j for j in jobs if j.state.name not in ENDED_BADLY]
  return live[0] if live else None


def _find_or_create(client, parent: str, job: Job, where: Dict[str, str]):
  """The job to watch (`_existing`, or a new one) and the step's earlier ones."""
  from google.cloud import aiplatform_v1
  earlier = _jobs(client, parent, job.name)
  found = _existing(earlier)
  if found is not None:
    log.info("training job %s: reattached to CustomJob %s, started for this step before "
             "(a retried step, or a create whose answer was lost)", job.name, found.name)
    return found, earlier
  custom = body(job, where)
  if earlier:  # an earlier attempt's ended badly: this one's name says so
    custom["display_name"] = f"{job.name}-attempt-{len(earlier) + 1}"
  found = client.create_custom_job(parent=parent, custom_job=aiplatform_v1.CustomJob(custom),
                                   timeout=vertex_calls.CALL_TIMEOUT)
  log.info("training job %s: CustomJob %s created%s", job.name, found.name,
           f" (the earlier one ended {earlier[-1].state.name})" if earlier else "")
  return found, earlier


def run(job: Job) -> None:
  from google.api_core import exceptions
  where = placement(job.pod)
  parent = f"projects/{where['project']}/locations/{where['region']}"
  client = _client(where["region"])
  try:
    # Listed again after a blip: a create whose answer was lost may have
    # made the job, which the retry then finds by its label.
    found, _ = vertex_calls.patiently(
        f"start CustomJob {job.name}", lambda: _find_or_create(client, parent, job, where))
    log.info("training job %s: its logs: https://console.cloud.google.com/vertex-ai/"
             "locations/%s/training/%s?project=%s", job.name, where["region"],
             found.name.rsplit("/", 1)[-1], where["project"])
    state = None
    while DONE.get(found.state.name) is None:
      if found.state.name != state:
        state = found.state.name
        log.info("training job %s: %s", job.name, state)
      time.sleep(POLL_SECONDS)
      found = vertex_calls.patiently(f"read CustomJob {found.name}", functools.partial(
          client.get_custom_job, name=found.name, timeout=vertex_calls.CALL_TIMEOUT))
  except (exceptions.Forbidden, exceptions.PermissionDenied) as e:  # REST's 403, gRPC's
    why = re.sub(r"^[A-Z]+ \S+: ", "", e.message)  # REST's message starts with its URL
    raise ClusterError(f"Vertex AI: forbidden ({why}); grant the pipeline's service "
                       f"account roles/aiplatform.user") from None
  except exceptions.BadRequest as e:  # REST's 400; gRPC's InvalidArgument is one
    why = re.sub(r"^[A-Z]+ \S+: ", "", e.message)
    # The caller needs act-as on the job's service account (CustomJobSpec's
    # service_account, aiplatform_v1 types/custom_job.py lines 205-211).
    fix = (f"; grant the pipeline's service account roles/iam.serviceAccountUser on "
           f"{where['serviceAccount']}" if "act as" in why and "serviceAccount" in where else "")
    raise ClusterError(f"Vertex AI: the CustomJob was refused ({why}){fix}") from None
  if DONE[found.state.name] == "failed":
    raise JobFailed(f"training job {job.name}: CustomJob {found.state.name}: "
                    f"{found.error.message or 'no message'}")

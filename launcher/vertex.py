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
(`--train-machine-type`, default n1-standard-4) and `--env`. Kubernetes
secrets (`--secret-env`) do not exist there: a CustomJob reaches Google
Cloud as its service account. Its logs are in Cloud Logging; the step's
log links the job's page and says each change of the job's state.

The client speaks REST (not gRPC) to `<region>-aiplatform.googleapis.com`,
or to VERTEX_API_ENDPOINT when set (a Private Service Connect endpoint, or
tests/fakes/vertex_api.py's stand-in: `http://127.0.0.1:PORT`).
"""

import logging
import os
import re
import time
from typing import Dict, List, Optional

from launcher.job import ClusterError, Job, JobFailed

log = logging.getLogger("absl")
LABEL = "tfrecord-pipeline-job"
MACHINE = "n1-standard-4"
ENDPOINT_ENV = "VERTEX_API_ENDPOINT"
POLL_SECONDS = 10  # 6 reads a minute: far inside Vertex's quota; a step ends soon after
DONE = {"JOB_STATE_SUCCEEDED": "succeeded", "JOB_STATE_FAILED": "failed",
        "JOB_STATE_CANCELLED": "failed", "JOB_STATE_EXPIRED": "failed"}
# A job still CANCELLING counts as live: its replicas may still write the
# checkpoints a new job would read; the retried step waits for it to end.
ENDED_BADLY = ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


def body(job: Job) -> Dict:
  """The CustomJob, as aiplatform_v1's JSON form."""
  pod = job.pod
  machine = {"machine_type": pod.get("machineType") or MACHINE}
  gpus = (pod.get("resources") or {}).get("gpus")
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
  return {"display_name": job.name, "labels": {LABEL: job.name},
          "job_spec": {"worker_pool_specs": pools, "scheduling": scheduling}}


def _client(region: str, env=os.environ):
  from google.cloud import aiplatform_v1
  endpoint = env.get(ENDPOINT_ENV) or f"{region}-aiplatform.googleapis.com"
  return aiplatform_v1.JobServiceClient(client_options={"api_endpoint": endpoint},
                                        transport="rest")


def _parent(env=os.environ) -> str:
  import google.auth
  region = env.get("CLOUD_ML_REGION") or env.get("GOOGLE_CLOUD_REGION") or "us-central1"
  try:
    project = env.get("CLOUD_ML_PROJECT_ID") or google.auth.default()[1]
  except google.auth.exceptions.DefaultCredentialsError:
    raise ClusterError("Vertex AI: no Google credentials here: run the step on Vertex AI "
                       "Pipelines or GKE with a service account, or set "
                       "GOOGLE_APPLICATION_CREDENTIALS") from None
  if not project:
    raise ClusterError("Vertex AI: no project: set CLOUD_ML_PROJECT_ID, or run where "
                       "Google's default credentials name one")
  return f"projects/{project}/locations/{region}"


def _jobs(client, parent: str, name: str) -> List:
  """Every CustomJob this step created, in any state."""
  # `filter` exists only on the request, not as a keyword of the method.
  return list(client.list_custom_jobs(request={"parent": parent,
                                               "filter": f'labels.{LABEL}="{name}"'}))


def _existing(jobs: List) -> Optional[object]:
  """The job a retried step reattaches to: one still queued, pending,
  running or already succeeded. A job that ended badly (failed, cancelled,
  expired) leaves room for a new one, or a retried step could never train
  again. ListCustomJobs has no order, so the state decides, not the place."""
  live = [j for j in jobs if j.state.name not in ENDED_BADLY]
  return live[0] if live else None


def run(job: Job) -> None:
  from google.api_core import exceptions
  from google.cloud import aiplatform_v1
  parent = _parent()
  client = _client(parent.split("/")[3])
  try:
    earlier = _jobs(client, parent, job.name)
    found = _existing(earlier)
    if found is None:
      custom = body(job)
      if earlier:  # an earlier attempt's ended badly: this one's name says so
        custom["display_name"] = f"{job.name}-attempt-{len(earlier) + 1}"
      found = client.create_custom_job(parent=parent, custom_job=aiplatform_v1.CustomJob(custom))
      log.info("training job %s: CustomJob %s created%s", job.name, found.name,
               f" (the earlier one ended {earlier[-1].state.name})" if earlier else "")
    else:
      log.info("training job %s: reattached to CustomJob %s (a retried step)", job.name,
               found.name)
    log.info("training job %s: its logs: https://console.cloud.google.com/vertex-ai/"
             "locations/%s/training/%s?project=%s", job.name, parent.split("/")[3],
             found.name.rsplit("/", 1)[-1], parent.split("/")[1])
    state = None
    while DONE.get(found.state.name) is None:
      if found.state.name != state:
        state = found.state.name
        log.info("training job %s: %s", job.name, state)
      time.sleep(POLL_SECONDS)
      found = client.get_custom_job(name=found.name)
  except (exceptions.Forbidden, exceptions.PermissionDenied) as e:  # REST's 403, gRPC's
    why = re.sub(r"^[A-Z]+ \S+: ", "", e.message)  # REST's message starts with its URL
    raise ClusterError(f"Vertex AI: forbidden ({why}); grant the pipeline's service "
                       f"account roles/aiplatform.user") from None
  if DONE[found.state.name] == "failed":
    raise JobFailed(f"training job {job.name}: CustomJob {found.state.name}: "
                    f"{found.error.message or 'no message'}")

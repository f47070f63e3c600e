"""Vertex AI Pipelines: runs, schedules and the runs list, through
google-cloud-aiplatform (the commands in commands/kubeflow/runs.py call these
with `--backend vertex`).

- The run is aiplatform's PipelineJob of the compiled file, with its runtime
  parameters, the pipeline root (gs://), the service account, network and
  labels. `enable_caching` stays None: True or False would overwrite every
  task's caching option (pipeline_jobs.py `_set_enable_caching_value`),
  the run report's, the notice's and BaselineModel's included, which the
  compiler left off on purpose.
- A schedule is a PipelineJobSchedule of that run, one run at a time. Its
  pipeline cannot be edited (`update` takes the cron and limits only), so a
  schedule of the same name is replaced: the new one created, then the old
  one deleted; if creating fails, the old one stays.
- The runs list reads each finished job's step records in Vertex's layout,
  `<root>/<project number>/<job id>/` (runtime/run_layout.py); the job's
  resource name carries the project's number.

The API's refusals become one line naming the fix (`describe`). The client
speaks gRPC to the region's host as aiplatform names it
(trainer/jobs/vertex_calls.py `api_endpoint`), or REST to
VERTEX_API_ENDPOINT when set (a Private Service Connect endpoint, or
tests/fakes/vertex_pipelines.py's stand-in), as trainer/jobs/vertex.py does.
"""

import argparse
import contextlib
import itertools
import os
import re
import sys
from typing import Dict, List, Optional

from kubeflow.api import vertex_bucket
from kubeflow.api.google_cloud import ENDPOINT_ENV
from kubeflow.errors import KubeflowError
from runtime import run_layout
from trainer.jobs.vertex_calls import api_endpoint

LABEL_KEY, LABEL_VALUE = re.compile(r"^[a-z][a-z0-9_-]{0,62}$"), re.compile(r"^[a-z0-9_-]{0,63}$")
BILLING_LABEL = "vertex-ai-pipelines-run-billing-id"
NETWORK = re.compile(r"^projects/\d+/global/networks/[^/]+$")
PLUGIN_ERROR = re.compile(r"(Getting metadata from plugin failed with error: )\('([^']*)'.*\)$")
SERVICE = re.compile(r"api/([a-z0-9.-]+\.googleapis\.com)")
API_NAMES = {"aiplatform.googleapis.com": "Vertex AI", "storage.googleapis.com": "Cloud Storage",
             "cloudresourcemanager.googleapis.com": "Cloud Resource Manager"}
ENDED = ("PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED")


def describe(e: Exception, project: str) -> str:
  """An API error as one line that names the fix."""
  from google.api_core import exceptions
  from google.auth import exceptions as auth_exceptions
  if isinstance(e, exceptions.RetryError) and e.cause is not None:  # retried till its deadline
    e = e.cause
  message = (e.args[0] if isinstance(e, auth_exceptions.GoogleAuthError) and e.args
             and isinstance(e.args[0], str) else getattr(e, "message", None) or str(e))
  # grpc's plugin quotes the RefreshError's arguments: its first is the words.
  message = " ".join(PLUGIN_ERROR.sub(r"\1\2", str(message)).split())
  if "SERVICE_DISABLED" in message or "has not been used in project" in message:
    # Google's message links the API it means: the bucket check calls Cloud
    # Storage's and Resource Manager's, not only Vertex AI's.
    api = (SERVICE.search(message) or SERVICE.search("api/aiplatform.googleapis.com")).group(1)
    return (f"the {API_NAMES.get(api, api)} API is not enabled in project {project}: "
            f"gcloud services enable {api} --project {project}")
  # 400 INVALID_ARGUMENT, not 403 (googleapis/python-aiplatform#1073).
  if "permission to act as service_account" in message:
    return (f"you may not act as the run's service account ({message}): grant your "
            "account roles/iam.serviceAccountUser on it, or name another with "
            "--service-account")
  if isinstance(e, (exceptions.PermissionDenied, exceptions.Forbidden)):
    return (f"permission denied ({message}): grant your account roles/aiplatform.user "
            f"on project {project}, and roles/iam.serviceAccountUser on the pipeline's "
            "service account")
  # google-auth's refresh failing: raised as is on REST; on gRPC, grpc's auth
  # plugin turns it into a status whose message says so (grpc core's "Getting
  # metadata from plugin failed with error: ...").
  if isinstance(e, (exceptions.Unauthenticated, exceptions.Unauthorized,
                    auth_exceptions.RefreshError)) \
      or "Getting metadata from plugin failed" in message:
    return (f"your credentials were refused or could not be refreshed ({message}): sign "
            "in again with `gcloud auth application-default login`, or point "
            "GOOGLE_APPLICATION_CREDENTIALS at a valid service account key")
  if isinstance(e, auth_exceptions.TransportError):  # the token endpoint unreachable
    return (f"could not reach Google's sign-in to refresh your credentials ({message}): "
            "check this machine's network or proxy")
  if isinstance(e, exceptions.NotFound):
    return f"not found ({message}): check --project, --region and the pipeline root's bucket"
  return f"{type(e).__name__}: {message}"


@contextlib.contextmanager
def calls(what: str, project: str):
  """Turns what Google's API refuses, or google-auth's failure to refresh the
  credentials before a call, into a KubeflowError naming `what`."""
  from google.api_core import exceptions
  from google.auth import exceptions as auth_exceptions
  try:
    yield
  except (exceptions.GoogleAPICallError, exceptions.RetryError, auth_exceptions.RefreshError,
          auth_exceptions.TransportError) as e:
    raise KubeflowError(f"Vertex AI: {what} failed: {describe(e, project)}") from None


def labels(items: Optional[List[str]]) -> Dict[str, str]:
  """`--label KEY=VALUE`s as Google Cloud labels go (lowercase letters,
  digits, `-` and `_`, at most 63 characters); the SDK checks only that
  they are strings. Vertex's own billing label is refused: it would be
  overwritten (aiplatform_v1 pipeline_job.py, `labels`)."""
  found = {}
  for item in items or ():
    key, sep, value = item.partition("=")
    if not sep or not LABEL_KEY.match(key) or not LABEL_VALUE.match(value):
      raise argparse.ArgumentTypeError(
          f"--label: expected KEY=VALUE of lowercase letters, digits, - and _ (KEY "
          f"starting with a letter, each at most 63 characters), found {item!r}")
    if key == BILLING_LABEL:
      raise argparse.ArgumentTypeError(f"--label: {key} is Vertex AI's own")
    found[key] = value
  return found


def pipeline_job(args, path: str, display_name: str, root: str, params: Dict[str, str]):
  """The run, as aiplatform sends it."""
  from google.cloud import aiplatform
  if args.network and not NETWORK.match(args.network):
    raise argparse.ArgumentTypeError(
        f"--network: expected projects/NUMBER/global/networks/NAME, found {args.network!r}")
  with calls(f"reading {args.spec}", args.project):
    try:
      return aiplatform.PipelineJob(display_name=display_name, template_path=path,
                                    pipeline_root=root, parameter_values=params,
                                    enable_caching=None, labels=labels(args.label))
    except ValueError as e:  # a name, an id or a parameter the SDK refuses
      raise KubeflowError(f"Vertex AI: {args.spec}: {e}") from None


def check_bucket(root: str, args) -> None:
  """The root's bucket, before the SDK can create one (vertex_bucket.py);
  what could not be checked is one warning line on stderr."""
  with calls(f"reading the pipeline root's bucket {root}", args.project):
    unchecked = vertex_bucket.check(root, args.project, args.region)
  if unchecked:
    print(f"warning: {unchecked}", file=sys.stderr)


def submit(args, path: str, display_name: str, root: str, params: Dict[str, str]) -> str:
  """Starts the run; returns the line that names it."""
  job = pipeline_job(args, path, display_name, root, params)
  check_bucket(root, args)
  with calls("submitting the run", args.project):
    job.submit(service_account=args.service_account, network=args.network)
  return f"run: {job.resource_name.rsplit('/', 1)[-1]} ({display_name}) in {args.project}, " \
         f"{args.region}: {job._dashboard_uri()}"


def schedule(args, path: str, root: str, params: Dict[str, str], cron: str) -> str:
  """Creates the schedule `args.name`, or replaces the ones of that name;
  returns the line that says which."""
  from google.cloud import aiplatform
  job = pipeline_job(args, path, args.name, root, params)
  check_bucket(root, args)
  with calls(f"creating the schedule {args.name!r}", args.project):
    old = schedules(args.name)
    new = aiplatform.PipelineJobSchedule(pipeline_job=job, display_name=args.name)
    # One run at a time: max_concurrent_run_count limits the requests that
    # start runs, not the runs in flight (aiplatform_v1 schedule.py).
    new.create(cron=cron, max_concurrent_run_count=1, max_concurrent_active_run_count=1,
               service_account=args.service_account, network=args.network)
  with calls(f"deleting the replaced schedule {args.name!r}", args.project):
    for found in old:
      found.delete()
  verb = "updated" if old else "created"
  return (f"schedule {verb}: {args.name} ({new.resource_name}), cron {cron!r}, "
          "max concurrency 1")


def schedules_command(args) -> List[str]:
  """`schedules list|pause|resume|delete [NAME]` on Vertex AI."""
  with calls(f"{args.action} of schedules", args.project):
    found = schedules(args.name)
    if args.action == "list":
      return [f"{s.display_name}\t{s.state.name}\t{s.cron}\t{s.resource_name}" for s in found]
    if not args.name:
      raise argparse.ArgumentTypeError(f"schedules {args.action}: expected a schedule NAME")
    if not found:
      raise KubeflowError(f"no schedule named {args.name!r} in {args.project}, {args.region}")
    for s in found:
      if args.action == "resume":  # aiplatform's resume drops catch_up (schedules.py 120-133)
        s.api_client.resume_schedule(name=s.resource_name, catch_up=args.catchup)
      else:
        getattr(s, args.action)()
  done = {"pause": "paused", "resume": "resumed", "delete": "deleted"}[args.action]
  return [f"{done}: {args.name}" + (", catching up the runs it missed" if args.catchup else "")]


def runs_command(args, pipeline: str) -> List[str]:
  """`runs` on Vertex AI: each recent run's time, state, name and id, and for
  a finished one what its step records say it did."""
  from kubeflow.api import run_folders
  with calls("listing runs", args.project):
    found = recent_runs(args.project, args.region, pipeline, args.limit)
  lines = [f"no runs of {pipeline} in {args.project}, {args.region}"] if not found else []
  for job in found:
    job_id = job.name.rsplit("/", 1)[-1]
    outcome = (run_folders.outcome_at(run_folder(job, pipeline, args.pipeline_root),
                                      pipeline, job_id)
               if job.state.name in ENDED else "")
    lines.append("\t".join(filter(None, (
        f"{job.create_time:%Y-%m-%d %H:%M}", job.state.name.replace("PIPELINE_STATE_", ""),
        job.display_name, job_id, outcome))))
  return lines


def schedules(name: Optional[str] = None) -> List:
  from google.cloud import aiplatform
  return aiplatform.PipelineJobSchedule.list(
      filter=f'display_name="{name}"' if name else None)


def recent_runs(project: str, region: str, pipeline: str, limit: int) -> List:
  """The pipeline's newest `limit` runs, as aiplatform_v1 PipelineJobs.

  Not aiplatform's `PipelineJob.list`: it sends no order and no page size,
  reads every run of the pipeline, spec included, and sorts them here
  (aiplatform base.py `_list`). Vertex lists newest first by default
  (pipeline_service.py ListPipelineJobsRequest.order_by); one page of
  `limit` is all this needs."""
  found = client(region).list_pipeline_jobs(request={
      "parent": f"projects/{project}/locations/{region}",
      "filter": f'pipeline_name="{pipeline}"', "page_size": limit})
  return list(itertools.islice(found, limit))


def client(region: str):
  """The generated PipelineService client, where aiplatform's is pointed."""
  from google.cloud import aiplatform_v1
  endpoint = os.environ.get(ENDPOINT_ENV)
  return aiplatform_v1.PipelineServiceClient(
      client_options={"api_endpoint": endpoint or api_endpoint(region)},
      **({"transport": "rest"} if endpoint else {}))


def run_folder(job, pipeline: str, root: Optional[str]) -> str:
  """Where the job's steps wrote their records: `root` (--pipeline-root) or
  the job's own, then Vertex's `<project number>/<job id>`."""
  # projects/<number>/locations/<region>/pipelineJobs/<id>
  _, number, _, _, _, job_id = job.name.split("/")
  root = root or job.runtime_config.gcs_output_directory
  return run_layout.of_run(run_layout.VERTEX, root, pipeline, job_id, number).run

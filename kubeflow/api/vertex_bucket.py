"""The pipeline root's bucket, checked before a Vertex run is sent.

aiplatform's `PipelineJob.submit()` creates a root bucket that does not
exist, in the user's project, and grants the run's account on it
(`utils/gcs_utils.py`@v1.165.1 lines 357-379): a mistyped root becomes a new
bucket. A root bucket another project owns only logs a "bucket squatting"
ValueError (lines 380-387), which `pipeline_jobs.py` lines 471-474 swallow,
and the run writes its models there. So both stop here, in one line, with
the user's credentials and the calls the SDK makes: the bucket's GET (the
JSON API's resource carries `projectNumber`) and Resource Manager's
project number (`_verify_bucket_ownership`, gcs_utils.py lines 66-91).

What the SDK cannot check it lets through (`_verify_bucket_ownership`
answers False on any exception, lines 84-91, and submit only logs), and so
does this check, with a warning: a bucket whose GET is refused (a user with
object roles only has no storage.buckets.get) and a project number Resource
Manager will not give (its API off, or no resourcemanager.projects.get).

`PipelineJobSchedule.create` makes no bucket (pipeline_job_schedules.py
lines 241-276 never call gcs_utils); the check guards a schedule's runs all
the same, whose root is the same bucket.
"""

from typing import Optional

from kubeflow.api import google_cloud
from kubeflow.errors import KubeflowError


def bucket_of(root: str) -> str:
  return root[len("gs://"):].split("/", 1)[0]


def check(root: str, project: str, region: str) -> Optional[str]:
  """Raises KubeflowError, one line, when `root`'s bucket does not exist or
  belongs to another project than `project`. A root not in gs:// is left
  to check_location.

  Returns:
    None when checked; else one line saying what could not be checked and
    why, for the caller to show as a warning before it goes on.
  Raises:
    KubeflowError: no such bucket, or another project's.
    google.api_core.exceptions.GoogleAPICallError, google.auth.exceptions.
      GoogleAuthError: any other refusal, for the caller's `vertex.calls`.
  """
  if not root.startswith("gs://"):
    return None
  from google.api_core import exceptions
  from google.cloud import storage
  from google.cloud.aiplatform import initializer
  from google.cloud.aiplatform.utils import resource_manager_utils
  name = bucket_of(root)
  credentials = initializer.global_config.credentials  # the user's, as the SDK's
  fix = (f"create it with `gsutil mb -p {project} -l {region} gs://{name}`, or give "
         f"--pipeline-root a bucket of project {project}")
  where = f"--pipeline-root {root}: expected a bucket of project {project}"
  unchecked = f"--pipeline-root {root}: could not check that gs://{name} is project {project}'s"
  try:
    bucket = storage.Client(project=project, credentials=credentials).lookup_bucket(name)
  except exceptions.Forbidden as e:
    if "has not been used in project" in str(e):  # the Cloud Storage API off: the caller's
      raise
    # Object roles alone do not hold storage.buckets.get; Vertex runs on them.
    return (f"{unchecked}: storage.buckets.get was refused to your account; going on, "
            "as Vertex AI does")
  if bucket is None:  # the SDK would create it
    raise KubeflowError(f"{where}, found no bucket gs://{name}: {fix}")
  try:
    number = str(resource_manager_utils.get_project_number(project, credentials=credentials))
  except exceptions.Forbidden as e:
    return f"{unchecked}: {google_cloud.number_refused(e, project)}; going on, as Vertex AI does"
  if str(bucket.project_number) != number:
    raise KubeflowError(
        f"{where} (number {number}), found gs://{name} owned by project number "
        f"{bucket.project_number}: {fix}")
  return None

"""The pipeline root's bucket, checked before a Vertex run or schedule is sent.

aiplatform's `PipelineJob.submit()` creates a root bucket that does not
exist, in the user's project, and grants the run's account on it
(`utils/gcs_utils.py`@v1.165.1 lines 357-379): a mistyped root becomes a new
bucket. A root bucket another project owns only logs a "bucket squatting"
ValueError (lines 380-387), which `pipeline_jobs.py` lines 471-474 swallow,
and the run writes its models there. So both stop here, in one line, with
the user's credentials and the calls the SDK makes: the bucket's GET (the
JSON API's resource carries `projectNumber`) and Resource Manager's
project number (`_verify_bucket_ownership`, gcs_utils.py lines 66-91).
"""

from kubeflow.errors import KubeflowError


def bucket_of(root: str) -> str:
  return root[len("gs://"):].split("/", 1)[0]


def check(root: str, project: str, region: str) -> None:
  """Raises KubeflowError, one line, unless `root`'s bucket exists and
  belongs to `project`. A root not in gs:// is left to check_location.

  Raises:
    KubeflowError: no such bucket, another project's, or one the user may
      not read (which a bucket of another project answers).
    google.api_core.exceptions.GoogleAPICallError, google.auth.exceptions.
      GoogleAuthError: any other refusal, for the caller's `vertex.calls`.
  """
  if not root.startswith("gs://"):
    return
  from google.api_core import exceptions
  from google.cloud import storage
  from google.cloud.aiplatform import initializer
  from google.cloud.aiplatform.utils import resource_manager_utils
  name = bucket_of(root)
  credentials = initializer.global_config.credentials  # the user's, as the SDK's
  fix = (f"create it with `gsutil mb -p {project} -l {region} gs://{name}`, or give "
         f"--pipeline-root a bucket of project {project}")
  where = f"--pipeline-root {root}: expected a bucket of project {project}"
  try:
    bucket = storage.Client(project=project, credentials=credentials).lookup_bucket(name)
  except exceptions.Forbidden as e:  # storage.buckets.get refused: not shown as the project's
    if "has not been used in project" in str(e):  # the Cloud Storage API off: the caller's
      raise
    raise KubeflowError(
        f"{where}, found gs://{name} refused to your account (storage.buckets.get "
        f"denied: another project's bucket?): {fix}, or grant yourself "
        "roles/storage.legacyBucketReader on it") from None
  if bucket is None:  # the SDK would create it
    raise KubeflowError(f"{where}, found no bucket gs://{name}: {fix}")
  number = str(resource_manager_utils.get_project_number(project, credentials=credentials))
  if str(bucket.project_number) != number:
    raise KubeflowError(
        f"{where} (number {number}), found gs://{name} owned by project number "
        f"{bucket.project_number}: {fix}")

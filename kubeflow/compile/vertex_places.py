"""Where Vertex AI Pipelines' steps can read and write, and which names its
job ids take: checked by `compile --backend vertex` (backend.py
`check_vertex`) and by `submit` and `schedule` of a spec compiled for it
(commands/kubeflow/runs.py), before anything is sent."""

import re

from kubeflow.errors import CompileError

VERTEX_NAME = "Vertex AI Pipelines"
# A PipelineJob's id: the SDK's `<name>-<YYYYmmddHHMMSS>` must match this
# (google-cloud-aiplatform v1.165.1 constants/pipeline.py line 36;
# pipeline_jobs.py lines 270-281), so a name of at most 113 characters
# that starts with a letter; else `submit` fails, after compiling.
JOB_ID = re.compile(r"^[a-z][-a-z0-9]{0,127}$")
JOB_ID_SUFFIX = "-20260101000000"


def check_name(name: str) -> None:
  """Raises CompileError for a pipeline name the job id rule refuses."""
  if not JOB_ID.match(name + JOB_ID_SUFFIX):
    raise CompileError(
        f"pipeline name {name!r}: {VERTEX_NAME} expects a letter first and at most "
        f"{128 - len(JOB_ID_SUFFIX)} characters (its job id is the name and a "
        f"14-digit time, at most 128); set --pipeline-name")


def check_location(where: str, uri: str) -> None:
  """Raises CompileError, one line, for a root or folder a Vertex step cannot
  reach: `compile`, `submit` and `schedule` check each they are given."""
  # Vertex docs, "Configure the pipeline root": a Cloud Storage URI.
  if where == "--pipeline-root" and not uri.startswith("gs://"):
    raise CompileError(
        f"--pipeline-root {uri}: {VERTEX_NAME} expects a Cloud Storage URI "
        f"(gs://BUCKET/PATH), found {scheme_of(uri)}")
  # tensorflow-io's s3 reads keys a Vertex step does not have.
  if uri.startswith("s3://"):
    raise CompileError(
        f"{where} {uri}: {VERTEX_NAME} expects gs:// (its steps reach Google Cloud "
        f"as the run's service account, with no S3 keys), found s3://")
  # A Vertex step sees Cloud Storage and its /gcs/ mount, not this machine.
  if not uri.startswith(("gs://", "/gcs/")):
    raise CompileError(
        f"{where} {uri}: {VERTEX_NAME} expects gs:// or /gcs/ (its steps run in "
        f"Google Cloud, not on this machine), found {scheme_of(uri)}")


def scheme_of(uri: str) -> str:
  return f"{uri.split('://')[0]}://" if "://" in uri else "a folder"

"""Vertex AI's set-up for the commands: the region, the credentials and the
project, each checked as aiplatform would check it, but as one line that
names the fix rather than the SDK's traceback at its first call
(`connect`; kubeflow/api/vertex.py makes the calls)."""

import argparse
import os
from typing import Optional, Tuple

from kubeflow.errors import KubeflowError

ENDPOINT_ENV = "VERTEX_API_ENDPOINT"
REGION_ENVS = ("GOOGLE_CLOUD_REGION", "CLOUD_ML_REGION")


def _region(region: Optional[str]) -> str:
  """The region, checked as aiplatform checks it (`utils.validate_region`,
  v1.165.1 utils/__init__.py lines 316-322: a region, `global`, or a
  multi-regional jurisdiction such as `us`, in any case), as one line; in
  lower case, as the SDK sends it (initializer.py line 482)."""
  import difflib

  from google.cloud.aiplatform import utils as aiplatform_utils
  from google.cloud.aiplatform.constants import base as constants
  region = region or next((os.environ[e] for e in REGION_ENVS if os.environ.get(e)), None)
  if not region:
    raise argparse.ArgumentTypeError(
        "--region: expected the Vertex AI region (e.g. us-central1), found none "
        f"(nor ${' or $'.join(REGION_ENVS)})")
  try:
    aiplatform_utils.validate_region(region)
  except ValueError:
    known = sorted(constants.SUPPORTED_REGIONS)
    close = difflib.get_close_matches(region, known, n=1)
    raise argparse.ArgumentTypeError(
        f"--region {region}: {'did you mean ' + close[0] + '? ' if close else ''}expected "
        f"a Vertex AI region, one of {', '.join(known)}") from None
  return region.lower()


def _credentials():
  """(credentials, their project) as aiplatform finds them on first need
  (initializer.py lines 118-120), found here so that none is one line, not
  the SDK's traceback at the first call."""
  import google.auth
  try:
    return google.auth.default()
  except google.auth.exceptions.DefaultCredentialsError:
    raise KubeflowError(
        "no Google Cloud credentials: sign in with `gcloud auth application-default "
        "login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account's key "
        "file") from None


def connect(project: Optional[str], region: Optional[str]) -> Tuple[str, str]:
  """Sets aiplatform's project, region and endpoint; returns (project, region).

  Raises:
    argparse.ArgumentTypeError: no region or an unknown one, or no project anywhere.
    KubeflowError: no credentials.
  """
  from google.cloud import aiplatform
  region = _region(region)
  _, found = _credentials()
  project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or found
  if not project:
    raise argparse.ArgumentTypeError(
        "--project: expected the Google Cloud project, found none (nor "
        "$GOOGLE_CLOUD_PROJECT, nor one in your default credentials: "
        "gcloud auth application-default login)")
  endpoint = os.environ.get(ENDPOINT_ENV)
  aiplatform.init(project=project, location=region,
                  **({"api_endpoint": endpoint, "api_transport": "rest"} if endpoint else {}))
  return project, region


def number_refused(e: Exception, project: str) -> str:
  """Why Resource Manager's 403 refused `project`'s number, and the fix, in
  words. Resource Manager answers a project that does not exist as one the
  caller may not see (403, not 404), so a mistyped --project reads so."""
  message = getattr(e, "message", None) or str(e)
  if "SERVICE_DISABLED" in str(e) or "has not been used in project" in str(e):
    return (f"the Cloud Resource Manager API is not enabled in project {project} "
            f"(gcloud services enable cloudresourcemanager.googleapis.com --project {project})")
  return (f"Resource Manager refused to read project {project} ({message}): check "
          f"--project {project}, which it answers so when no such project exists, or "
          "grant your account resourcemanager.projects.get on it")


def project_number(project: str) -> str:
  """The project's number, which Vertex names its run folders by: `project`
  itself when it is one, else Resource Manager's answer to the user's
  credentials (the call aiplatform's bucket check makes, vertex_bucket.py).

  Raises:
    KubeflowError: no credentials, or Resource Manager refused (403).
    google.api_core.exceptions.GoogleAPICallError: any other failed call.
  """
  if project.isdigit():
    return project
  from google.api_core import exceptions
  from google.cloud.aiplatform.utils import resource_manager_utils
  credentials, _ = _credentials()
  try:
    return str(resource_manager_utils.get_project_number(project, credentials=credentials))
  except exceptions.Forbidden as e:
    raise KubeflowError(f"reading the number of project {project} failed: "
                        f"{number_refused(e, project)}") from None

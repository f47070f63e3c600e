"""Doctor's checks of a spec compiled for Vertex AI, one line each: the
region, the credentials (found and refreshed: an expired sign-in fails
here, not at the first call), the project, the Vertex AI API (enabled and
open to the user), the pipeline root's bucket (there and the project's),
and the Trainer's CustomJob machine against its GPU.

Each is the check `submit` makes, or Vertex would: kubeflow/api/
google_cloud.py's region and credentials, kubeflow/api/vertex_bucket.py's
bucket, trainer/jobs/vertex_machines.py's machine; refusals are worded by
kubeflow/api/vertex.py's `describe`. A check that needs one that failed
is not checked, so a missing sign-in is one FAIL, not four.
"""

import argparse
from typing import List, Optional

from kubeflow.doctor import lines
from kubeflow.errors import KubeflowError

CREDENTIALS = "the Google Cloud credentials"
REGION_FIX = "give --region a Vertex AI region (e.g. us-central1), or set $GOOGLE_CLOUD_REGION"


def split(said: str):
  """(what was found, the fix) of a one-line message worded `<found>: <fix>`:
  split at its last colon outside parentheses (a quoted API message may
  hold colons of its own)."""
  depth, at = 0, -1
  for i, c in enumerate(said):
    depth += {"(": 1, ")": -1}.get(c, 0)
    if depth == 0 and said.startswith(": ", i):
      at = i
  return (said[:at], said[at + 2:]) if at >= 0 else (said, "see above")


def _failed(what: str, said: str) -> lines.Line:
  return lines.fail(what, *split(said))


def machine(wanted) -> List[lines.Line]:
  """The CustomJob's machine against its GPU (`needs.read`'s worker pod):
  compile refuses a mismatch, but a spec edited or compiled before the
  check would only fail when Vertex refuses the CustomJob, after every step
  before the Trainer ran. No line without Vertex workers with GPUs."""
  from trainer.jobs import vertex_machines
  resources = wanted.worker_pod.get("resources") or {}
  gpus, gpu_type = int(resources.get("gpus") or 0), resources.get("gpu_type")
  if wanted.engine != "vertex" or not gpus:
    return []
  named = wanted.worker_pod.get("machineType")  # else the one the CustomJob gets
  what = (f"the machine of the Trainer's {wanted.workers} Vertex AI workers "
          f"({named or vertex_machines.machine_for(gpu_type, gpus)}, each {gpus} x {gpu_type})")
  wrong = vertex_machines.refused(gpu_type) or vertex_machines.check(named, gpu_type, gpus)
  if not wrong:
    return [lines.ok(what)]
  # Their words end with the fix: "...; use --train-machine-type g2-standard-8".
  found, _, fix = wrong.rpartition("; ")
  return [lines.fail(what, found or wrong, "compile with " + fix[len("use "):]
                     if fix.startswith("use ") else fix)]


def _region(region: Optional[str]):
  """(the region or None, its line)."""
  from kubeflow.api import google_cloud
  try:
    region = google_cloud._region(region)
  except argparse.ArgumentTypeError as e:
    return None, lines.fail("the Vertex AI region", str(e), REGION_FIX)
  return region, lines.ok(f"the Vertex AI region {region}")


def _credentials(project: Optional[str]):
  """(the credentials or None, their line): found, then refreshed, as the
  first call would (a sign-in of some weeks ago fails here)."""
  import google.auth.transport.requests
  from google.auth import exceptions as auth_exceptions

  from kubeflow.api import google_cloud, vertex
  try:
    credentials, _ = google_cloud._credentials()
  except KubeflowError as e:
    return None, _failed(CREDENTIALS, str(e))
  try:
    credentials.refresh(google.auth.transport.requests.Request())
  except (auth_exceptions.RefreshError, auth_exceptions.TransportError) as e:
    return None, _failed(CREDENTIALS, vertex.describe(e, project or "(none yet)"))
  return credentials, lines.ok(f"{CREDENTIALS} (found and refreshed)")


def _api(project: str, region: str) -> lines.Line:
  """The cheapest read aiplatform makes: one page of one pipeline job in
  the region. A disabled API or a missing role is Google's 403, worded
  by `describe`."""
  from google.api_core import exceptions
  from google.auth import exceptions as auth_exceptions

  from kubeflow.api import vertex
  what = f"the Vertex AI API in project {project}, {region}"
  try:
    vertex.client(region).list_pipeline_jobs(request={
        "parent": f"projects/{project}/locations/{region}", "page_size": 1})
  except (exceptions.GoogleAPICallError, exceptions.RetryError, auth_exceptions.RefreshError,
          auth_exceptions.TransportError) as e:
    return _failed(what, vertex.describe(e, project))
  return lines.ok(what)


def _bucket(root: str, project: str, region: str) -> List[lines.Line]:
  """vertex_bucket's check of the root's bucket (none for a root not in gs://,
  compile's and submit's check_location's)."""
  from google.api_core import exceptions
  from google.auth import exceptions as auth_exceptions

  from kubeflow.api import vertex, vertex_bucket
  if not root.startswith("gs://"):
    return []
  what = f"the pipeline root's bucket gs://{vertex_bucket.bucket_of(root)}"
  try:
    unchecked = vertex_bucket.check(root, project, region)
  except KubeflowError as e:
    return [_failed(what, str(e))]
  except (exceptions.GoogleAPICallError, exceptions.RetryError, auth_exceptions.RefreshError,
          auth_exceptions.TransportError) as e:
    return [_failed(what, vertex.describe(e, project))]
  if unchecked:
    return [lines.unchecked(what, unchecked)]
  return [lines.ok(f"{what} (project {project}'s)")]


def check(wanted, project: Optional[str], region: Optional[str],
          before_run: bool = False) -> List[lines.Line]:
  """Every line for a Vertex spec's needs (`needs.read`'s), sent to
  `project` and `region` (default: as `submit` finds them).
  `before_run`, submit's: the machine only; submit has connected (region,
  credentials, project) and checks the bucket itself."""
  found = machine(wanted)
  if before_run:
    return found
  from kubeflow.api import google_cloud
  region, line = _region(region)
  credentials, signed_in = _credentials(project)
  found = [line, signed_in] + found
  after = ("the Vertex AI API", f"the pipeline root's bucket {wanted.root}")
  if region is None or credentials is None:
    why = "needs " + " and ".join(w for w, bad in (("a valid region", region is None),
                                                    ("credentials", credentials is None)) if bad)
    return found + [lines.unchecked(what, why) for what in after]
  try:  # the project as submit finds it, and aiplatform set up for the bucket check
    project, region = google_cloud.connect(project, region)
  except argparse.ArgumentTypeError as e:
    return found + [lines.fail("the Google Cloud project", str(e),
                               "give --project, or set $GOOGLE_CLOUD_PROJECT")]
  return found + [_api(project, region)] + _bucket(wanted.root, project, region)

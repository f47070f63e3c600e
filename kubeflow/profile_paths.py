"""Where a multi-user install's profile namespace may read and write: the
prefixes its own keys to the install's store reach. Compile and every step
hold paths to them.

From Kubeflow Pipelines 2.15 the profile controller gives each profile
namespace its own keys to the install's store (SeaweedFS), in the
namespace's Secret `mlpipeline-minio-artifact` (keys `accesskey` and
`secretkey`), under a user policy that allows them four prefixes of the
bucket `mlpipeline` and nothing else (kubeflow/pipelines
`manifests/kustomize/base/installs/multi-user/pipelines-profile-controller/
sync.py`: the bucket, S3_BUCKET_NAME, @2.15.0 line 23 and @2.17.0 line 24;
the prefixes @2.15.0 lines 370-373 and @2.17.0 lines 484-487, the same at
both; from 2.17.0 a bucket policy limits listing to them too, lines
176-253):

  s3://mlpipeline/artifacts/              every namespace's
  s3://mlpipeline/private-artifacts/NS/   the namespace's runs' artifacts (the
                                          controller's default root, line 285)
  s3://mlpipeline/private/NS/             the namespace's own
  s3://mlpipeline/shared/                 every namespace's

A root, data root or serving dir anywhere else is refused by the store in
the middle of a step, as AccessDenied from whichever library met it first;
so compile refuses it (`compile --namespace NS` with the keys from that
Secret), and every step refuses it before it starts, each in one line
naming the prefixes. A step knows it holds a profile's keys from
PROFILE_ENV, which compile sets in every step's environment.

Before 2.15 (MinIO) the namespace's Secret is a copy of the install's own
keys, which reach the whole bucket (`sync.py`@2.5.0 lines 77-83 and
365-375). Compile holds to the prefixes all the same: paths under them
work on every version, and keep working after an upgrade.
"""

import re
from typing import Dict, List, Mapping, Optional

from runtime import kube

BUCKET = "mlpipeline"
SECRET = "mlpipeline-minio-artifact"
# The namespace whose profile keys a step holds, set by compile.
PROFILE_ENV = "PROFILE_NAMESPACE"
# Where a single-user install's pipelines run, with the install's own keys.
SINGLE_USER_NAMESPACE = "kubeflow"
S3_URI = re.compile(r"s3://[^\s\"',\\]+")


def prefixes(namespace: str) -> List[str]:
  """The four prefixes `namespace`'s keys reach, as s3:// URIs."""
  return [f"s3://{BUCKET}/artifacts/", f"s3://{BUCKET}/private-artifacts/{namespace}/",
          f"s3://{BUCKET}/private/{namespace}/", f"s3://{BUCKET}/shared/"]


def reaches(namespace: str, uri: str) -> bool:
  """Whether `namespace`'s keys reach `uri`. A URI that is not s3:// is
  not the install's store's, and not theirs to refuse."""
  if not uri.startswith("s3://"):
    return True
  # A prefix's own folder (s3://mlpipeline/private/NS) holds only what lies under it.
  return any((uri.rstrip("/") + "/").startswith(p) for p in prefixes(namespace))


def outside(namespace: str, uris: Mapping[str, str]) -> Optional[str]:
  """The one line that refuses the first of `uris` (what it is -> URI)
  that `namespace`'s keys do not reach, or None when they reach them all."""
  for what, uri in uris.items():
    if uri and not reaches(namespace, uri):
      bucket, _, path = uri[len("s3://"):].partition("/")
      rest = path if bucket == BUCKET else f"{bucket}/{path}"
      return (f"{what} {uri}: the profile namespace {namespace}'s keys (the {SECRET} Secret "
              f"the profile controller writes, Kubeflow Pipelines 2.15 and later) reach "
              f"only {', '.join(prefixes(namespace))}; expected a path under one of them, "
              f"e.g. s3://{BUCKET}/private/{namespace}/{rest.strip('/')}")
  return None


def uris_in(values: Mapping[str, object]) -> Dict[str, str]:
  """Every s3:// URI in `values` (a name -> a value, which may be a JSON
  text holding URIs), by `name` (`name` 2, 3... after the first)."""
  found = {}
  for name, value in values.items():
    for i, uri in enumerate(S3_URI.findall(str(value))):
      found[name if i == 0 else f"{name} {i + 1}"] = uri
  return found


def step_namespace(env: Mapping[str, str],
                   namespace_file: Optional[str] = None) -> Optional[str]:
  """The profile namespace whose keys this step holds, or None.

  The keys are those of the namespace the pod runs in, whose Secret the
  pod's environment reads: the pod's own namespace when its service
  account's is mounted, else the one compiled for. In `kubeflow`, a
  single-user install's, the Secret holds the install's own keys.
  """
  compiled = env.get(PROFILE_ENV)
  if not compiled:
    return None
  try:
    with open(namespace_file or kube.NAMESPACE_FILE, encoding="utf-8") as f:
      namespace = f.read().strip() or compiled
  except OSError:
    namespace = compiled
  return None if namespace == SINGLE_USER_NAMESPACE else namespace

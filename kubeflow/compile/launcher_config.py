"""The namespace's `kfp-launcher` ConfigMap, for a root on an S3-compatible store.

TFX writes a step's outputs itself, through TensorFlow (S3_ENDPOINT and the
AWS variables, runtime/storage.py). But the KFP launcher, which wraps every
step in its container, downloads input artifacts before the step and
uploads outputs and the `executor-logs` log after it, and it opens the
bucket only from the `providers` key of the `kfp-launcher` ConfigMap in the
run's namespace (kubeflow/pipelines `backend/src/v2/config/env.go`@2.17.0
lines 40 and 118-175, @2.5.0 lines 39 and 105-162). Without it an s3://
root is AWS's: no endpoint, no path style, credentials from the
environment (`config/s3.go`@2.17.0 lines 87-96, @2.5.0 lines 82-91;
`objectstore/object_store.go`@2.17.0 lines 91-105 and 318-375, @2.5.0
line 85), so the install's own store (`minio-service.kubeflow:9000` to 2.15,
`seaweedfs.kubeflow:9000` from 2.16) is never reached, and
the first step fails after its program succeeded ("failed to upload output
artifact", `component/launcher_v2.go`@2.17.0 lines 824-835).

So `compile`, given an s3:// root and S3_ENDPOINT, writes the ConfigMap
beside the spec, in `config/s3.go`'s schema (@2.17.0 lines 25-70):
`s3.default` with the endpoint as host:port, `disableSSL` for http://,
`forcePathStyle: true` (an in-cluster service has no per-bucket host
names), the region (an empty one would leave the launcher none: it
falls back only to the container's AWS_REGION), and credentials by
`secretRef` to the secret the steps already take AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY from (`fromEnv: false`: before 2.17 `fromEnv: true`
ignores the endpoint, object_store.go@2.5.0 lines 251-253, @2.15.0 lines
254-256, the same at 2.16.x; only 2.17.0 builds a client from it, lines
305-315). AWS itself (no S3_ENDPOINT) and gs:// need none.

On a multi-user install, compiled with `--namespace NS`, the file is for
NS, and when the steps' keys are those the profile controller writes into
NS (the `mlpipeline-minio-artifact` Secret), every path they use must lie
under NS's prefixes (kubeflow/profile_paths.py): `profile_namespace` says
when that holds. The controller does not overwrite a `kfp-launcher`
ConfigMap once it exists (its attachments' updateStrategy OnDelete,
`pipelines-profile-controller/decorator-controller.yaml`@2.17.0 lines 18-21).
"""

import os
import urllib.parse
from typing import Dict, Optional, Sequence, Tuple

import yaml

from kubeflow import profile_paths
from kubeflow.errors import CompileError

FILE = "kfp-launcher.yaml"
NAME = "kfp-launcher"  # config/env.go@2.17.0 line 37 (line 36 at 2.5.0)
ACCESS, SECRET = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"
DEFAULT_REGION = "us-east-1"  # MinIO and SeaweedFS take any region


def configmap(pipeline_root: str, env: Dict[str, str],
              secret_env: Sequence[Tuple[str, str, str]]) -> Optional[Dict]:
  """The ConfigMap for this root, or None when the launcher needs none.

  Args:
    pipeline_root: the compiled `--pipeline-root`.
    env: the `--env` variables of every step.
    secret_env: the `--secret-env` entries, (secret, key, variable).

  Raises:
    CompileError: an s3:// root with S3_ENDPOINT whose keys do not both come
      from one Kubernetes secret (the launcher reads them from one).
  """
  endpoint = env.get("S3_ENDPOINT", "")
  if not (pipeline_root.startswith("s3://") and endpoint):
    return None
  plain = env.get("S3_USE_HTTPS", "1") == "0"
  parsed = urllib.parse.urlsplit(endpoint if "://" in endpoint else
                                 f"{'http' if plain else 'https'}://{endpoint}")
  by_var = {var: (secret, key) for secret, key, var in secret_env}
  if not (ACCESS in by_var and SECRET in by_var and by_var[ACCESS][0] == by_var[SECRET][0]):
    raise CompileError(
        f"--pipeline-root {pipeline_root} with S3_ENDPOINT {endpoint}: the Kubeflow "
        f"launcher reads the store's keys from one Kubernetes secret; expected "
        f"--secret-env SECRET:KEY={ACCESS} and --secret-env SECRET:KEY={SECRET} "
        f"naming the same secret, found "
        f"{', '.join(f'{s}:{k}={v}' for v, (s, k) in sorted(by_var.items())) or 'none'}")
  secret = by_var[ACCESS][0]
  store = {"default": {
      "endpoint": parsed.netloc,
      "region": env.get("AWS_REGION") or DEFAULT_REGION,
      "disableSSL": parsed.scheme == "http",
      "forcePathStyle": True,
      "credentials": {"fromEnv": False, "secretRef": {
          "secretName": secret, "accessKeyKey": by_var[ACCESS][1],
          "secretKeyKey": by_var[SECRET][1]}}}}
  return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME},
          "data": {"defaultPipelineRoot": pipeline_root,
                   # env.go's getBucketProviders unmarshals this text as YAML.
                   "providers": yaml.safe_dump({"s3": store}, sort_keys=False)}}


def profile_namespace(namespace: Optional[str],
                      secret_env: Sequence[Tuple[str, str, str]]) -> Optional[str]:
  """The profile namespace whose keys the steps hold, or None.

  Args:
    namespace: `--namespace`: where the runs go; none, or `kubeflow`, is a
      single-user install's, whose Secret holds the install's own keys.
    secret_env: the `--secret-env` entries, (secret, key, variable).
  """
  if not namespace or namespace == profile_paths.SINGLE_USER_NAMESPACE:
    return None
  by_var = {var: secret for secret, _, var in secret_env}
  return namespace if by_var.get(ACCESS) == profile_paths.SECRET else None


def write(output_dir: str, config: Optional[Dict],
          namespace: Optional[str] = None) -> Optional[str]:
  """Writes the ConfigMap beside the spec; returns the line that says to
  apply it, into `namespace` if given, or None when there is none."""
  if config is None:
    return None
  from tfx.dsl.io import fileio  # output_dir may be a bucket, as for the spec
  path = os.path.join(output_dir, FILE)
  with fileio.open(path, "w") as f:
    f.write(yaml.safe_dump(config, sort_keys=False))
  if namespace:
    return f"the launcher's store: kubectl apply -n {namespace} -f {path}"
  return (f"the launcher's store: kubectl apply -n {profile_paths.SINGLE_USER_NAMESPACE} -f {path} "
          f"(or -n your profile's namespace on a multi-user install)")

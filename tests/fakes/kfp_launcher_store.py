"""A STAND-IN for how the KFP launcher opens the pipeline root's bucket:
kubeflow/pipelines `backend/src/v2/objectstore/object_store.go` at 2.5.0,
2.15.0 (2.16.x is 2.15.0's) and 2.17.0, each rule cited beside its code.
tests/fakes/kfp_backend.py's launcher downloads inputs and uploads outputs
(the `executor-logs` log) only through a Bucket opened here, from the run's
session (tests/fakes/kfp_launcher_providers.py: the namespace's
`kfp-launcher` ConfigMap's `providers`).

- OpenBucket, called by the launcher before the step
  (`component/launcher_v2.go`@2.17.0 line 269, @2.5.0 line 220): with a
  secretRef, the keys read from the namespace's Secret, the endpoint,
  region, path style and SSL from the params. With none (`fromEnv`), AWS's
  defaults: no endpoint, no path style, whatever credentials the container's
  environment holds (@2.17.0 lines 91-105 and 318-375, @2.5.0 line 85,
  gocloud's s3blob URL opener); only 2.17.0 builds a client from a
  `fromEnv` session's endpoint (HasStructuredS3Settings, lines 305-307).
  AWS cannot be reached from here, so such a bucket fails at its first
  request, as a cluster's launcher fails on AWS with the in-cluster store's
  bucket and keys.
- The SDK: aws-sdk-go v1 at 2.5.0, v2 from 2.15.0. An empty region falls
  back to the container's AWS_REGION (v2: or AWS_DEFAULT_REGION), else every
  request fails. At 2.15 and 2.16 an empty endpoint still becomes the
  client's base endpoint, `https://` with no host (object_store.go@2.15.0
  lines 285-296); 2.5.0 and 2.17.0 (line 357) leave AWS's.
- An endpoint without path style is addressed by virtual host,
  `<bucket>.<host>`, which an in-cluster service name never resolves: the
  stand-in fails it whatever the host (the store here is 127.0.0.1, which
  stands for such a name).

Nothing of the test process's environment reaches a Bucket: its client is
built from the session's params, the Secret's keys and the container's
environment alone. What those keys may reach is the store's to say: on a
multi-user install's stand-in store, a profile namespace's keys reach only
its prefixes (tests/fakes/s3_profiles.py), the launcher's uploads and
downloads included. Retries (`maxRetries`, 2.17's second upload attempt)
are not modelled: every attempt here fails alike. Nor is a root with a
query string, which gocloud's URL opener reads (its endpoint, path style).
"""

import os
import re
from typing import Dict, Optional

from tests.fakes.kfp_launcher_providers import StoreError, q

# config/env.go@2.17.0 line 37: the Secret and ConfigMap live in the run's
# namespace; the stand-in cluster's is kubeflow (standin_cluster.NAMESPACE).
NAMESPACE = "kubeflow"

# The params that make 2.17.0 build a client for a `fromEnv` session
# (objectstore/config.go@2.17.0 lines 246-259).
STRUCTURED = ("region", "endpoint", "disableSSL", "forcePathStyle", "maxRetries")
# object_store.go@2.17.0 line 354 (@2.5.0 line 270): AWS's own, not set.
AWS_ENDPOINT = re.compile(r"^(https://)?s3.amazonaws.com")


def _client_errors() -> tuple:
  """What boto3 raises for a request that failed (imported with boto3)."""
  from boto3.exceptions import S3UploadFailedError
  from botocore.exceptions import BotoCoreError, ClientError
  return (BotoCoreError, ClientError, S3UploadFailedError)


class Bucket:
  """An opened bucket: a boto3 client built from the session alone, or,
  for AWS's defaults, none (AWS is not reachable from here)."""

  def __init__(self, name: str, client=None, unreachable: str = ""):
    self.name, self.client, self.unreachable = name, client, unreachable

  def _check(self) -> None:
    if self.client is None:
      raise StoreError(self.unreachable)

  def upload(self, local: str, key: str) -> None:
    """UploadBlob: a file as one object, a folder object by object."""
    self._check()
    files = ([(local, key)] if os.path.isfile(local) else
             [(os.path.join(d, f), f"{key}/{os.path.relpath(os.path.join(d, f), local)}")
              for d, _, names in os.walk(local) for f in names])
    for path, name in files:
      try:
        self.client.upload_file(path, self.name, name)
      except _client_errors() as e:  # object_store.go@2.17.0 lines 207-233
        raise StoreError(f"uploadFile(): unable to complete copying {q(path)} to remote "
                         f"storage {q(name)}: {type(e).__name__}: {e}") from None

  def objects(self, prefix: str):
    """The keys under `prefix` (DownloadBlob lists them first)."""
    self._check()
    try:
      pages = self.client.get_paginator("list_objects_v2").paginate(
          Bucket=self.name, Prefix=prefix)
      return [o["Key"] for page in pages for o in page.get("Contents", [])]
    except _client_errors() as e:  # object_store.go@2.17.0 line 184, @2.5.0 line 131
      raise StoreError(f"failed to list objects in remote storage {q(prefix)}: "
                       f"{type(e).__name__}: {e}") from None

  def download(self, key: str, path: str) -> None:
    self._check()
    try:
      self.client.download_file(self.name, key, path)
    except _client_errors() as e:  # object_store.go@2.17.0 lines 235-268
      raise StoreError(f"downloadFile(): unable to complete copying {q(key)} to local "
                       f"storage {q(path)}: {type(e).__name__}: {e}") from None


def open_bucket(session: Optional[Dict], bucket: str, secrets: Dict[str, Dict[str, str]],
                env: Dict[str, str], version, namespace: str = NAMESPACE) -> Bucket:
  """objectstore.OpenBucket for an s3:// bucket.

  Args:
    session: the run's session info, or None for a bucket other than the
      root's (ParseBucketConfigForArtifactURI gives it none,
      `launcher_v2.go`@2.17.0 lines 1030-1040, @2.5.0 lines 714-724).
    secrets: the namespace's Secrets: name -> key -> value.
    env: the step container's environment (the launcher runs in it).
    version: the backend's (major, minor).
    namespace: the run's, whose Secrets `secrets` are.

  Raises:
    StoreError: the credentials' Secret or keys are missing (the launcher
      fails before the step starts).
  """
  params = (session or {}).get("Params", {})
  from_env = params.get("fromEnv", "true") == "true"
  # @2.17.0 lines 305-307: fromEnv with an endpoint, region or the like set
  # still builds the client from them; before, fromEnv is the environment's
  # defaults (@2.5.0 lines 251-253, @2.15.0 lines 254-256).
  structured = version >= (2, 17) and any(k in params for k in STRUCTURED)
  v2 = version >= (2, 15)  # aws-sdk-go-v2's config reads AWS_DEFAULT_REGION too
  region = params.get("region") or env.get("AWS_REGION") or (
      env.get("AWS_DEFAULT_REGION") if v2 else "")
  if from_env and not structured:
    return Bucket(bucket, unreachable=(
        f"dial tcp: lookup {bucket}.s3.{region or 'us-east-1'}.amazonaws.com: no such host "
        f"(AWS's default endpoint, virtual-hosted: no kfp-launcher providers gave an "
        f"endpoint)"))
  if from_env:
    keys = (env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY"))
    if not all(keys):  # the SDK's default chain finds none in the pod
      return Bucket(bucket, unreachable="failed to refresh cached credentials, no EC2 IMDS "
                                        "role found (fromEnv: the container has no AWS keys)")
  else:
    keys = _secret_keys(params, secrets, bucket, version, namespace)
  endpoint = params.get("endpoint", "")
  if AWS_ENDPOINT.match(endpoint.lower()):
    endpoint = ""
  elif not endpoint and v2 and version < (2, 17):
    scheme = "http" if params.get("disableSSL") == "true" else "https"
    return Bucket(bucket, unreachable=f'the client\'s base endpoint is "{scheme}://", no '
                                      f"host: the providers give no endpoint "
                                      f"(object_store.go@2.15.0 lines 285-296)")
  if endpoint and not endpoint.startswith(("http://", "https://")):
    # @2.17.0 lines 357-366; aws-sdk-go v1's AddScheme alike
    endpoint = f"{'http' if params.get('disableSSL') == 'true' else 'https'}://{endpoint}"
  if not endpoint:
    return Bucket(bucket, unreachable=f"dial tcp: lookup {bucket}.s3.amazonaws.com: "
                                      f"no such host (AWS: no endpoint in the providers)")
  if not region:
    return Bucket(bucket, unreachable=(
        "MissingRegion: could not find region configuration" if not v2 else
        "operation error S3: no region: the providers give none, nor does the container's "
        "AWS_REGION or AWS_DEFAULT_REGION"))
  if params.get("forcePathStyle", "true") != "true":  # config.go@2.17.0 lines 225-233
    host = endpoint.split("://", 1)[1]
    return Bucket(bucket, unreachable=f"dial tcp: lookup {bucket}.{host.split(':')[0]}: "
                                      f"no such host (forcePathStyle false: virtual-hosted)")
  import boto3
  from botocore.config import Config
  client = boto3.client(
      "s3", endpoint_url=endpoint, region_name=region,
      aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                    connect_timeout=5, read_timeout=60))
  return Bucket(bucket, client)


def _secret_keys(params: Dict, secrets: Dict, bucket: str, version, namespace: str):
  """getS3BucketCredential (@2.17.0 lines 377-407, @2.5.0 lines 282-312),
  its error wrapped as OpenBucket wraps it (@2.17.0 lines 46 and 55,
  @2.5.0 lines 43 and 50)."""
  name = params.get("secretName", "")
  # 2.5.0 capitalises what 2.17.0 does not.
  retrieve, get = ("Failed to retrieve", "Failed to get") if version < (2, 17) else (
      "failed to retrieve", "failed to get")
  secret = secrets.get(name)
  if secret is None:
    why = f'secrets {q(name)} not found'
  else:
    access, key = secret.get(params.get("accessKeyKey", "")), secret.get(
        params.get("secretKeyKey", ""))
    if access and key:
      return access, key
    why = (f"could not find specified keys '{params.get('accessKeyKey', '')}' or "
           f"'{params.get('secretKeyKey', '')}'")
  raise StoreError(f"Failed to open bucket {q(bucket)}: {retrieve} credentials for bucket {bucket}: "
                   f"{get} Bucket credentials from secret name={q(name)} "
                   f"namespace={q(namespace)}: {why}")

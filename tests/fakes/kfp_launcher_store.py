"""A STAND-IN for how the KFP launcher reaches the pipeline root's bucket:
kubeflow/pipelines `backend/src/v2` at 2.5.0 and 2.17.0, each rule cited
beside its code. tests/fakes/kfp_backend.py's launcher downloads inputs and
uploads outputs (the `executor-logs` log) only through a Bucket opened here.

- The session (the root DAG driver, once per run: `driver/root_dag.go`@2.17.0
  lines 103-125, `driver/driver.go`@2.5.0 lines 162-184): the namespace's
  `kfp-launcher` ConfigMap's `providers` text, unmarshalled as YAML
  (`config/env.go`@2.17.0 lines 163-175, @2.5.0 lines 150-162), its `s3`
  entry turned into session params by S3ProviderConfig.ProvideSessionInfo
  (`config/s3.go`@2.17.0 lines 72-172, @2.5.0 lines 67-159).
- Opening the bucket (`objectstore/object_store.go` OpenBucket, called by
  the launcher before the step, `component/launcher_v2.go`@2.17.0 line 269,
  @2.5.0 line 220): with a secretRef, the keys read from the namespace's
  Secret, the endpoint, region, path style and SSL from the params. With
  none (`fromEnv`), AWS's defaults: no endpoint, no path style, whatever
  credentials the container's environment holds (@2.17.0 lines 91-105 and
  318-375, @2.5.0 line 85, gocloud's s3blob URL opener). AWS cannot be
  reached from here, so such a bucket fails at its first request, as a
  cluster's launcher fails on AWS with the in-cluster store's bucket and keys.
- An endpoint without path style is addressed by virtual host,
  `<bucket>.<host>`, which an in-cluster service name never resolves: the
  stand-in fails it whatever the host (the store here is 127.0.0.1, which
  stands for such a name).

Nothing of the test process's environment reaches a Bucket: its client is
built from the session's params and the Secret's keys alone. Retries
(2.17's `maxRetries`) are not modelled: every attempt here fails alike.
"""

import json
import os
from typing import Dict, Optional

import yaml

# config/env.go@2.17.0 line 37: the Secret and ConfigMap live in the run's
# namespace; the stand-in cluster's is kubeflow (standin_cluster.NAMESPACE).
NAMESPACE = "kubeflow"


class StoreError(RuntimeError):
  """What the driver or the launcher says when the store fails it."""


def q(text: str) -> str:
  """Go's %q of a string."""
  return json.dumps(text)


def session_info(launcher_data: Dict[str, str], root: str) -> Dict:
  """cfg.GetStoreSessionInfo(root) for the run, as the root driver stores
  it in the run's context (`metadata/client.go` GetPipeline).

  Raises:
    StoreError: the driver's error (the run fails before any step).
  """
  if not root.startswith("s3://"):
    return {"Provider": root.split("://")[0], "Params": {}}  # not modelled here
  text = launcher_data.get("providers", "")
  try:
    s3 = (yaml.safe_load(text) or {}).get("s3") if text else None
  except yaml.YAMLError as e:  # env.go@2.17.0 line 172, @2.5.0 line 159
    raise StoreError(f"failed to unmarshall kfp bucket providers, ensure that "
                     f"providers config is well formed: {e}") from None
  bucket, _, prefix = root[len("s3://"):].partition("/")
  default, overrides = (s3 or {}).get("default"), (s3 or {}).get("Overrides")
  # s3.go@2.17.0 lines 87-96, @2.5.0 lines 82-91: no provider config, or a
  # query string in the root: the environment's (AWS's) defaults.
  if (default is None and overrides is None) or "?" in root:
    return {"Provider": "s3", "Params": {"fromEnv": "true"}}
  if not default or not default.get("credentials"):  # @2.17.0 line 99, @2.5.0 line 94
    raise StoreError("invalid provider config: missing default credentials")
  params = {"endpoint": default.get("endpoint", ""), "region": default.get("region", ""),
            # @2.17.0 lines 105-115, @2.5.0 lines 100-110: SSL on, path style
            # on, unless said otherwise.
            "disableSSL": _bool(default.get("disableSSL", False)),
            "forcePathStyle": _bool(default.get("forcePathStyle", True))}
  _credentials(params, default["credentials"], "default")
  # @2.17.0 lines 135-170, @2.5.0 lines 125-157: the first override whose
  # bucket and key prefix match.
  for override in overrides or []:
    if override.get("bucketName") == bucket and prefix.startswith(override.get("keyPrefix", "")):
      params.update({k: v for k, v in (("endpoint", override.get("endpoint")),
                                       ("region", override.get("region"))) if v})
      for key in ("disableSSL", "forcePathStyle"):
        if key in override:
          params[key] = _bool(override[key])
      if not override.get("credentials"):
        raise StoreError("invalid provider config: missing override credentials")
      for key in ("secretName", "accessKeyKey", "secretKeyKey"):
        params.pop(key, None)
      _credentials(params, override["credentials"], "override")
      break
  return {"Provider": "s3", "Params": params}


def _bool(value) -> str:
  return "true" if value is True else "false"  # strconv.FormatBool of a *bool


def _credentials(params: Dict, credentials: Dict, which: str) -> None:
  params["fromEnv"] = _bool(bool(credentials.get("fromEnv")))
  if credentials.get("fromEnv"):
    return
  ref = credentials.get("secretRef")
  if not ref:  # the default's nil SecretRef is dereferenced (@2.17.0 line 124)
    raise StoreError(f"invalid provider config: missing {which} secretref")
  params.update(secretName=ref.get("secretName", ""), accessKeyKey=ref.get("accessKeyKey", ""),
                secretKeyKey=ref.get("secretKeyKey", ""))


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
      except _client_errors() as e:  # as the Go SDK's, they become the message
        raise StoreError(f"{type(e).__name__}: {e}") from None

  def objects(self, prefix: str):
    """The keys under `prefix` (DownloadBlob lists them first)."""
    self._check()
    try:
      pages = self.client.get_paginator("list_objects_v2").paginate(
          Bucket=self.name, Prefix=prefix)
      return [o["Key"] for page in pages for o in page.get("Contents", [])]
    except _client_errors() as e:
      raise StoreError(f"{type(e).__name__}: {e}") from None

  def download(self, key: str, path: str) -> None:
    self._check()
    self.client.download_file(self.name, key, path)


def open_bucket(session: Optional[Dict], bucket: str, secrets: Dict[str, Dict[str, str]],
                env: Dict[str, str], version) -> Bucket:
  """objectstore.OpenBucket for an s3:// bucket.

  Args:
    session: the run's session info, or None for a bucket other than the
      root's (ParseBucketConfigForArtifactURI gives it none,
      `launcher_v2.go`@2.17.0 lines 1030-1040, @2.5.0 lines 714-724).
    secrets: the namespace's Secrets: name -> key -> value.
    env: the step container's environment (the launcher runs in it).
    version: the backend's (major, minor).

  Raises:
    StoreError: the credentials' Secret or keys are missing (the launcher
      fails before the step starts).
  """
  params = (session or {}).get("Params", {})
  from_env = params.get("fromEnv", "true") == "true"
  # @2.17.0 lines 305-307: fromEnv with an endpoint, region or the like set
  # still builds the client from them (HasStructuredS3Settings, new in
  # 2.17.0); @2.5.0 lines 251-253: fromEnv is the environment's defaults.
  structured = version >= (2, 17) and any(
      k in params for k in ("endpoint", "region", "disableSSL", "forcePathStyle"))
  if from_env and not structured:
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
    return Bucket(bucket, unreachable=(
        f"dial tcp: lookup {bucket}.s3.{region}.amazonaws.com: no such host (AWS's "
        f"default endpoint, virtual-hosted: no kfp-launcher providers gave an endpoint)"))
  if from_env:
    keys = (env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY"))
  else:
    keys = _secret_keys(params, secrets, bucket, version)
  endpoint = params.get("endpoint", "")
  if endpoint and "://" not in endpoint:  # @2.17.0 lines 357-366; aws-sdk-go v1 alike
    endpoint = f"{'http' if params.get('disableSSL') == 'true' else 'https'}://{endpoint}"
  if not endpoint:
    return Bucket(bucket, unreachable=f"dial tcp: lookup {bucket}.s3.amazonaws.com: "
                                      f"no such host (AWS: no endpoint in the providers)")
  if params.get("forcePathStyle") != "true":
    host = endpoint.split("://", 1)[1]
    return Bucket(bucket, unreachable=f"dial tcp: lookup {bucket}.{host.split(':')[0]}: "
                                      f"no such host (forcePathStyle false: virtual-hosted)")
  import boto3
  from botocore.config import Config
  client = boto3.client(
      "s3", endpoint_url=endpoint, region_name=params.get("region") or "us-east-1",
      aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                    connect_timeout=5, read_timeout=60))
  return Bucket(bucket, client)


def _secret_keys(params: Dict, secrets: Dict, bucket: str, version):
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
                   f"namespace={q(NAMESPACE)}: {why}")

"""KServe's storage initializer as a STAND-IN: the environment its
credential builder gives the init container from the predictor's service
account, and the download it then makes with boto3. Used by kserve.py's
controller: a revision becomes ready only if this download brings TF
Serving a numbered version.

From kserve/kserve, file:line at each tag (v0.15.2 | v0.20.0):
- the account: `serviceAccountName`, "default" when empty
  (pkg/credentials/service_account_credentials.go :201-203 | :214-216);
  none there, nothing given (:204-209 | :217-222);
- its Secrets: each listed in the account's `secrets:` field, in order
  (:232-237 | :260-266), merged by pkg/credentials/utils.go MergeEnvs
  (:135 | :139): a later Secret's plain values (endpoint, region) replace
  an earlier's, its keys (`valueFrom`) never, so the first S3 Secret's
  keys are used; a listed Secret that is missing makes the pod webhook
  refuse the predictor's pod (mountSecretCredential :245-248 | :274-277,
  returned through storage_initializer_injector.go:443 | mutator.go:134,
  storage_initializer_injector.go:783 and :585), so the revision never
  gets Ready;
- an S3 Secret is one holding the secret key under the configured name
  (:262 | :291), the ConfigMap `inferenceservice-config`'s `credentials`
  `s3.s3AccessKeyIDName`/`s3SecretAccessKeyName`, shipped as
  `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (config/configmap/
  inferenceservice.yaml :633-634 | :673-674; without the config,
  `awsAccessKeyID`/`awsSecretAccessKey`, pkg/credentials/s3/s3_secret.go
  :33-34); its keys become AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
  (s3_secret.go :73-111 | :73-109);
- the Secret's annotations (pkg/credentials/s3/utils.go): the endpoint
  `serving.kserve.io/s3-endpoint`, from the annotation only (:24) | the
  annotation, else the Secret's own `S3_ENDPOINT` key (:39, :131-142);
  AWS_ENDPOINT_URL is `https://` + it unless `serving.kserve.io/s3-usehttps`
  is "0" (:25-29 | :175-183, "https by default"; v0.20.0 also takes an
  endpoint's own `http://` or `https://`, :166-174); `s3-region` gives
  AWS_DEFAULT_REGION, `s3-verifyssl` S3_VERIFY_SSL (:62-72, :85-94,
  annotations only | :59-65, :75-81, the annotation, else the Secret's own
  key of the variable's name, getEnvValue :131-142; then
  inferenceservice-config's, empty as shipped), each only when not empty;
  no endpoint, no AWS_ENDPOINT_URL: boto3 goes to AWS. S3_USE_HTTPS, which
  both also set, is not modelled: neither initializer reads it;
- the initializer's client: boto3 with AWS_ENDPOINT_URL when set
  (python/kserve/kserve/storage/storage.py :202-205 | python/storage/
  kserve_storage/kserve_storage.py :342-345), the keys from its
  environment; the listing as kserve.py's docstring says.
Not modelled: IRSA (`eks.amazonaws.com/role-arn`), the
`storageSecretNameAnnotation` and `storage-config` Secrets, GCS, Azure,
HDFS, CA bundles. Here no pod reaches the internet: with no endpoint the
download fails as boto3 does when AWS cannot be reached.
"""

import base64
import os
import re
from typing import Dict, List, Optional, Tuple

ACCESS_KEY, SECRET_KEY = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"  # the shipped names
ENDPOINT = "serving.kserve.io/s3-endpoint"
USE_HTTPS = "serving.kserve.io/s3-usehttps"
REGION = "serving.kserve.io/s3-region"
VERIFY_SSL = "serving.kserve.io/s3-verifyssl"


class InitializerFailed(Exception):
  """The storage initializer exited non-zero: its last log line, which
  KServe reports (FallbackToLogsOnError) as the failure's message."""


def secret_data(secret: dict) -> Dict[str, str]:
  """A Secret's keys as the API server keeps them: `data` base64, and
  `stringData` written over it."""
  data = {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}
  return {**data, **secret.get("stringData", {})}


def _endpoint(annotations: dict, data: dict, version: str) -> Tuple[str, str]:
  """(S3_ENDPOINT, AWS_ENDPOINT_URL) as utils.go builds them; ("", "") for none.
  Neither release trims the value; v0.15.2 takes an annotation that is
  there, even empty (:24), v0.20.0 a value that is not empty (:40)."""
  if version == "0.15":  # annotations only
    if ENDPOINT not in annotations:
      return "", ""
    given = annotations[ENDPOINT]
    return given, ("http://" if annotations.get(USE_HTTPS) == "0" else "https://") + given
  given = annotations.get(ENDPOINT, data.get("S3_ENDPOINT", ""))
  if not given:
    return "", ""
  for scheme in ("https://", "http://"):
    if given.lower().startswith(scheme):
      return given[len(scheme):], given
  use_https = annotations.get(USE_HTTPS, data.get("S3_USE_HTTPS"))
  return given, ("http://" if use_https == "0" else "https://") + given


def initializer_env(store, namespace: str, account: str, version: str) -> Dict[str, str]:
  """The storage initializer's environment from the predictor's account."""
  account = account or "default"
  found = store.get(("v1", namespace, "serviceaccounts", account))
  if found is None:
    return {}
  env: Dict[str, str] = {}
  for ref in found.get("secrets", []):
    secret = store.get(("v1", namespace, "secrets", ref["name"]))
    if secret is None:
      raise InitializerFailed(f'secrets "{ref["name"]}" not found')
    data = secret_data(secret)
    if SECRET_KEY not in data:
      continue  # a GCS, Azure or other Secret: not modelled
    annotations = secret.get("metadata", {}).get("annotations", {})
    # The keys are `valueFrom`, which MergeEnvs never replaces (pkg/credentials/
    # utils.go :135 | :139, copying `.Value` only): the first S3 Secret's stay.
    env.setdefault(ACCESS_KEY, data.get(ACCESS_KEY, ""))
    env.setdefault(SECRET_KEY, data[SECRET_KEY])
    s3_endpoint, url = _endpoint(annotations, data, version)
    if url:
      env.update(S3_ENDPOINT=s3_endpoint, AWS_ENDPOINT_URL=url)
    for annotation, var in ((REGION, "AWS_DEFAULT_REGION"), (VERIFY_SSL, "S3_VERIFY_SSL")):
      # Set only when not empty (:67, :89 | :60, :76); an empty annotation
      # still hides the data's key (getEnvValue).
      given = annotations.get(annotation, None if version == "0.15" else data.get(var))
      if given:
        env[var] = given
  return env


def process_env() -> Dict[str, str]:
  """This test process's S3 settings as an initializer's, for tests that
  only check what a URI lists."""
  return {"AWS_ENDPOINT_URL": os.environ["S3_ENDPOINT"],
          ACCESS_KEY: os.environ.get(ACCESS_KEY, "stand-in"),
          SECRET_KEY: os.environ.get(SECRET_KEY, "x")}


def downloaded(storage_uri: str, env: Optional[Dict[str, str]] = None) -> List[str]:
  """The files the storage initializer puts under /mnt/models, with `env`
  (this process's S3 settings if None): for s3://, kserve-storage's own
  listing, `bucket.objects.filter(Prefix=...)`, an unanchored prefix, each
  key's remainder its path (kserve_storage.py:515-553).

  Raises:
    InitializerFailed: the download's error, as boto3 words it.
  """
  if storage_uri.startswith("s3://"):
    env = process_env() if env is None else env
    import boto3
    import botocore.config
    import botocore.exceptions
    bucket, _, bucket_path = storage_uri[len("s3://"):].partition("/")
    url = env.get("AWS_ENDPOINT_URL")
    if not url:  # no pod here reaches AWS
      raise InitializerFailed("botocore.exceptions.EndpointConnectionError: Could not connect "
                              f'to the endpoint URL: "https://{bucket}.s3.amazonaws.com/'
                              f'?prefix={bucket_path}&encoding-type=url"')
    if not env.get(SECRET_KEY):  # never this process's own keys
      raise InitializerFailed("botocore.exceptions.NoCredentialsError: Unable to locate "
                              "credentials")
    s3 = boto3.resource("s3", endpoint_url=url,
                        region_name=env.get("AWS_DEFAULT_REGION") or "us-east-1",
                        aws_access_key_id=env.get(ACCESS_KEY),
                        aws_secret_access_key=env[SECRET_KEY],
                        verify=env.get("S3_VERIFY_SSL", "1").lower() not in ("0", "false"),
                        config=botocore.config.Config(connect_timeout=5, read_timeout=10,
                                                      retries={"max_attempts": 1}))
    try:
      keys = [o.key for o in s3.Bucket(bucket).objects.filter(Prefix=bucket_path)
              if not o.key.endswith("/") and o.size]
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
      raise InitializerFailed(f"{type(e).__module__}.{type(e).__name__}: {e}") from None
    return sorted(k[len(bucket_path):].lstrip("/") for k in keys)
  if "://" in storage_uri:
    raise NotImplementedError(f"the stand-in downloads s3:// only, found {storage_uri}")
  # A path without a scheme passes the controller (utils.go:425-429), but the
  # storage initializer's container cannot see this machine's folders.
  return []


def serves(storage_uri: str, env: Optional[Dict[str, str]] = None) -> bool:
  """TF Serving finds a numbered version holding saved_model.pb."""
  return any(re.match(r"^\d+/saved_model\.pb$", f) for f in downloaded(storage_uri, env))


def reported(failure: str, name: str, ready: bool, rolled_back_to: str) -> tuple:
  """(PredictorReady, modelStatus) of the latest revision `name`: ready, or
  failed with the storage initializer's `failure`, as reported upstream:
  the Knative Service's Ready, False with reason `RevisionFailed` and
  `Revision "<name>" failed with message: <message>.` (knative/serving
  configuration_lifecycle.go, MarkLatestCreatedFailed), becomes
  PredictorReady (inference_service_status.go@v0.20.0:612-622,
  @v0.15.2:487-497); the storage-initializer's exit gives `modelStatus`
  `BlockedByFailedLoad`, `FailedToLoad` and `lastFailureInfo` {reason
  `ModelLoadFailed`, its message, exitCode} (:721-787, @v0.15.2:578-630).
  Standard mode (no revisions: `rolled_back_to` "") reports the same
  modelStatus, and PredictorReady False (PropagateRawStatus, :360-420)."""
  if ready:
    return ({"type": "PredictorReady", "status": "True"},
            {"transitionStatus": "UpToDate", "modelRevisionStates": {
                "activeModelState": "Loaded", "targetModelState": "Loaded"}})
  message = failure or ("No versions of servable found under base path /mnt/models "
                        "(TF Serving's, the download holds no numbered version)")
  return ({"type": "PredictorReady", "status": "False", "reason": "RevisionFailed",
           "message": f'Revision "{name}" failed with message: {message}.'},
          {"transitionStatus": "BlockedByFailedLoad", "modelRevisionStates": {
              "activeModelState": "Loaded" if rolled_back_to else "",
              "targetModelState": "FailedToLoad"},
           "lastFailureInfo": {"reason": "ModelLoadFailed", "message": message,
                               "exitCode": 1}})


def add_s3_account(store, namespace: str, endpoint_url: str, account: str = "s3-reader",
                   keys: Tuple[str, str] = ("stand-in-key", "stand-in-secret")) -> None:
  """The ServiceAccount and Secret docs/kubeflow.md tells users to write
  for an HTTP MinIO or SeaweedFS: the keys, `s3-endpoint` host:port and
  `s3-usehttps` "0"."""
  host = endpoint_url.split("://", 1)[-1]
  store.create(("v1", namespace, "secrets", f"{account}-s3"), {
      "metadata": {"annotations": {ENDPOINT: host, USE_HTTPS: "0"}},
      "stringData": {ACCESS_KEY: keys[0], SECRET_KEY: keys[1]}})
  store.create(("v1", namespace, "serviceaccounts", account),
               {"secrets": [{"name": f"{account}-s3"}]})

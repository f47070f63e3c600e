"""The data root, listed as the steps will list it, and the pipeline root
and the serving dir, each taking a probe object written and deleted as the
steps write their outputs (and retention deletes them): at the steps'
`S3_ENDPOINT`, with the keys their `--secret-env` takes from the Secret.

The first step reads the data root minutes into a run; a root the steps'
keys may not list (another profile's prefix, keys the store does not know),
a bucket that does not exist, or an empty root fails it there. Here one
`ListObjectsV2` of at most one key answers the same question first.

The keys are read from the Secret (the user's own right to read it) and used
in this process only, never printed. The steps' endpoint is usually the
cluster's own (`seaweedfs.kubeflow:9000`), which the user's machine cannot
resolve: `--store-endpoint` names where this machine reaches the same store
(a port-forward); unreachable, the line is "not checked".
"""

import urllib.parse
from typing import List, Optional

from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs

KEY_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")  # what boto and TensorFlow read
REFUSED = ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403")


def in_cluster(url: str) -> bool:
  """Whether `url` names a Service by the cluster's DNS (`NAME.NAMESPACE`,
  `...svc`, `...cluster.local`), which only a pod resolves: no lookup is
  tried from here for it."""
  host = urllib.parse.urlsplit(url).hostname or ""
  labels = host.split(".")
  if host == "localhost" or all(p.isdigit() for p in labels):
    return False
  return len(labels) <= 2 or host.endswith((".svc", ".cluster.local"))


def forward(endpoint: str, namespace: str) -> str:
  """How to reach the steps' store at `endpoint` from this machine: the
  port-forward to its Service (`NAME.NAMESPACE`, else the run's
  `namespace`), and the --store-endpoint it gives."""
  url = urllib.parse.urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
  labels = (url.hostname or "").split(".")
  if not in_cluster(url.geturl()):
    return "pass --store-endpoint with a URL this machine reaches the store at"
  port = url.port or (443 if url.scheme == "https" else 80)
  where = labels[1] if len(labels) > 1 and labels[1] != "svc" else namespace
  return (f"reach the store through a port-forward (kubectl -n {where} port-forward "
          f"svc/{labels[0]} {port}) and pass --store-endpoint {url.scheme}://localhost:{port}")


def _keys(needs: Needs, reader: Reader) -> Optional[List[str]]:
  """The steps' access key and secret key, or None when no Secret gives both."""
  found = {}
  for secret, key, var in needs.secret_env:
    if var in KEY_VARS:
      values = reader.secret_values(secret) or {}
      if key in values:
        found[var] = values[key]
  return [found[v] for v in KEY_VARS] if len(found) == len(KEY_VARS) else None


def _probe(client, uri: str, endpoint: str, where: str) -> lines.Line:
  """A probe object written under `uri` and deleted again, as a step writes
  its outputs there (and retention deletes them)."""
  import uuid

  import botocore.exceptions
  what = f"{where} {uri}, written to and deleted from with the steps' keys"
  bucket, _, prefix = uri[len("s3://"):].partition("/")
  key = f"{prefix.rstrip('/')}/.doctor-probe-{uuid.uuid4().hex}".lstrip("/")
  try:
    client.put_object(Bucket=bucket, Key=key, Body=b"doctor")
  except botocore.exceptions.ClientError as e:
    return _refused(what, e, bucket, endpoint, "write under it",
                    "put keys that may write there in the Secret the steps name, or "
                    "compile with a path under the namespace's own prefix")
  try:
    client.delete_object(Bucket=bucket, Key=key)
  except botocore.exceptions.ClientError as e:
    return _refused(what, e, bucket, endpoint, f"delete what they wrote (s3://{bucket}/{key} "
                    "is left)", "grant the steps' keys s3:DeleteObject there: retention "
                    "(--keep-runs) and a retried step's clean-up delete too")
  return lines.ok(what)


def _refused(what: str, e, bucket: str, endpoint: str, verb: str, fix: str) -> lines.Line:
  code = e.response.get("Error", {}).get("Code", "")
  if code == "NoSuchBucket":
    return lines.fail(what, f"expected the bucket {bucket} at {endpoint}, found none",
                      "compile with paths in a bucket the store has")
  if code in REFUSED:
    return lines.fail(what, f"expected the steps' keys to {verb}, found them refused ({code})",
                      fix)
  raise e


def check(needs: Needs, reader: Reader, store_endpoint: str = "") -> List[lines.Line]:
  """The data root's line, listed, and the pipeline root's and the serving
  dir's, each written to, for s3:// places the steps reach with keys."""
  endpoint = needs.env.get("S3_ENDPOINT", "")
  places = {what: uri for what, uri in needs.places.items() if uri.startswith("s3://")}
  if not places or not endpoint:
    return []
  what = f"{', '.join(places)}, reached with the steps' keys"
  try:
    keys = _keys(needs, reader)
  except Unreadable as e:
    return [lines.unchecked(what, str(e))]
  if keys is None:
    return []  # the Secret's own line says what is missing
  url = store_endpoint or endpoint
  url = url if "://" in url else f"http://{url}"
  if not store_endpoint and in_cluster(url):
    return [lines.unchecked(what, f"the steps' S3_ENDPOINT {endpoint} is the cluster's own "
                                  f"name; {forward(endpoint, needs.namespace)}")]
  import boto3
  import botocore.exceptions
  client = boto3.client("s3", endpoint_url=url, aws_access_key_id=keys[0],
                        aws_secret_access_key=keys[1],
                        region_name=needs.env.get("AWS_REGION") or "us-east-1",
                        config=botocore.config.Config(connect_timeout=5, retries={
                            "max_attempts": 1}))
  try:
    out = ([_list(client, places["the data root"], endpoint)]
           if "the data root" in places else [])
    return out + [_probe(client, uri, endpoint, where) for where, uri in places.items()
                  if where != "the data root"]
  except botocore.exceptions.EndpointConnectionError:
    return [lines.unchecked(what, f"this machine cannot reach {url}; "
                                  f"{forward(endpoint, needs.namespace)}")]


def _list(client, root: str, endpoint: str) -> lines.Line:
  """The data root, listed for one span's files, as the first step lists it."""
  what = f"the data root {root}, listed with the steps' keys"
  bucket, _, prefix = root[len("s3://"):].partition("/")
  import botocore.exceptions
  try:
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix.rstrip("/") + "/", MaxKeys=1)
  except botocore.exceptions.ClientError as e:
    return _refused(what, e, bucket, endpoint, "list it",
                    "put keys that may read it in the Secret the steps name, or compile "
                    "with a --data-root under the namespace's own prefix")
  if not listed.get("KeyCount"):
    return lines.fail(what, "expected at least one span's files under it, found none",
                      "upload the data (tfrecords convert writes it) or compile with the "
                      "--data-root that holds it")
  return lines.ok(what)

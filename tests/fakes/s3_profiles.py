"""A STAND-IN for a multi-user install's store as the profile controller
sets it up at kubeflow/pipelines 2.17.0: moto's S3 (tests/fakes/s3_server.py)
behind each profile namespace's policy, in the server's own process.

Each rule, and where it comes from
(`manifests/kustomize/base/installs/multi-user/pipelines-profile-controller/
sync.py`@2.17.0 unless said otherwise):

- The keys: for each profile namespace the controller creates an access
  key of the SeaweedFS user named after the namespace and writes it into
  the namespace's Secret `mlpipeline-minio-artifact`, keys `accesskey` and
  `secretkey` (lines 456-511; @2.15.0 lines 346-394). Here `profile_keys`
  makes them; `profile_secret` is that Secret.
- Objects: the user policy allows `s3:Put*`, `s3:Get*`, `s3:List*` and
  `s3:DeleteObject` on `mlpipeline/artifacts/*`,
  `mlpipeline/private-artifacts/<ns>/*`, `mlpipeline/private/<ns>/*` and
  `mlpipeline/shared/*` (lines 468-492), and nothing on any other bucket or
  key. So a GET, HEAD, PUT (a multipart upload's parts included), POST
  (a multipart upload's start and end) or DELETE of an object is allowed
  under those prefixes only; a copy needs its source there too (upstream's
  own check, `test/seaweedfs/namespace_isolation_test.sh`@2.17.0 lines
  130-135); a multi-object delete, each of its keys.
- Listing and the bucket itself: the bucket policy of
  `ensure_bucket_list_policy` (lines 176-253), which SeaweedFS evaluates
  first: a listing whose prefix lies under those four prefixes (StringLike
  `private-artifacts/${aws:username}/*` and the like: `private/<ns>`
  without its slash is denied, lines 195-200 and 227-233); a HEAD of the
  bucket (lines 202-209); a top-level listing, no prefix with delimiter "/"
  (lines 210-220); nothing else (a flat listing, another namespace's
  prefix). Upstream's check of the same: namespace_isolation_test.sh
  lines 112-154.

A key this server does not know is refused (InvalidAccessKeyId); the
test's own keys (s3_server.KEY, an admin's) reach everything, as the
install's own `mlpipeline-minio-artifact` in `kubeflow` does.

Why not moto's own IAM: moto checks a listing against the bucket's ARN
alone, without the `s3:prefix` condition, so it can allow a namespace
every listing or none; and with its IAM on, every client, the test's
included, needs keys moto issued. The rule sits in front of moto's WSGI
app instead, so every process that reaches this store meets it: the
stand-in launcher's Bucket (tests/fakes/kfp_launcher_store.py), TensorFlow's
s3:// in the steps, Beam's boto3.

Not modelled: 2.15 and 2.16 (SeaweedFS 4.00, no bucket policy and no
`s3:DeleteObject`, sync.py@2.15.0 lines 356-377: whether a namespace's keys
may HEAD the bucket or list its own prefix there is not said by upstream's
tests of that version); the lifecycle rule that expires
`private-artifacts/` when ARTIFACT_RETENTION_DAYS is set (lines 126-174).
"""

import io
import json
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ElementTree
from typing import Dict, Optional

BUCKET = "mlpipeline"  # S3_BUCKET_NAME, line 24
SECRET = "mlpipeline-minio-artifact"
CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")


def profile_keys(namespace: str):
  """(access key, secret key) of the namespace's SeaweedFS user."""
  return f"{namespace}-access", f"{namespace}-secret"


def profile_secret(namespace: str) -> Dict[str, Dict[str, str]]:
  """The namespace's Secrets as the controller leaves them: name -> key -> value."""
  access, secret = profile_keys(namespace)
  return {SECRET: {"accesskey": access, "secretkey": secret}}


def prefixes(namespace: str):
  """The keys' prefixes the user policy names (lines 484-487)."""
  return ("artifacts/", f"private-artifacts/{namespace}/", f"private/{namespace}/", "shared/")


def refusal(namespace: str, method: str, path: str, query: Dict[str, str],
            headers: Dict[str, str], body: bytes = b"") -> Optional[str]:
  """Why `namespace`'s keys may not make this request, or None.

  Args:
    path: the request's path, decoded: /BUCKET[/KEY].
    query: its query parameters (first values).
    headers: its headers, lower-case names.
    body: its body (read only for a multi-object delete).
  """
  bucket, _, key = path.lstrip("/").partition("/")
  if bucket != BUCKET:
    return f"no policy of {namespace}'s allows bucket {bucket or '(none)'}"
  allowed = prefixes(namespace)
  if key:
    if not key.startswith(allowed):
      return f"{method} {key}: outside {', '.join(allowed)}"
    source = urllib.parse.unquote(headers.get("x-amz-copy-source", "")).lstrip("/")
    if source and not (source.startswith(f"{BUCKET}/") and
                       source[len(BUCKET) + 1:].startswith(allowed)):
      return f"copy from {source}: outside {', '.join(allowed)}"
    return None
  if method == "HEAD":
    return None  # AllowHeadBucket
  if method == "POST" and "delete" in query:
    keys = [e.text or "" for e in ElementTree.fromstring(body).iter()
            if e.tag.endswith("Key")]
    outside = [k for k in keys if not k.startswith(allowed)]
    return f"delete of {outside[0]}: outside {', '.join(allowed)}" if outside else None
  if method == "GET" and not ({"location", "policy", "acl", "lifecycle"} & set(query)):
    prefix = query.get("prefix") or None  # botocore sends none for ""
    if prefix is None:
      return None if query.get("delimiter") == "/" else "a flat listing of the bucket"
    return None if prefix.startswith(allowed) else f"a listing of {prefix}"
  return f"{method} on the bucket itself"


class ProfilePolicy:
  """WSGI middleware: `app` (moto's) behind the profiles' policies."""

  def __init__(self, app, namespaces, admin_key: str):
    self.app, self.admin = app, admin_key
    self.by_key = {profile_keys(ns)[0]: ns for ns in namespaces}

  def __call__(self, environ, start_response):
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    query = dict(urllib.parse.parse_qsl(environ.get("QUERY_STRING", ""),
                                        keep_blank_values=True))
    found = CREDENTIAL.search(authorization) or CREDENTIAL.search(
        "Credential=" + query.get("X-Amz-Credential", ""))
    key = found.group(1) if found else None
    if key is None or key == self.admin:  # an unsigned health check, or the admin
      return self.app(environ, start_response)
    namespace = self.by_key.get(key)
    if namespace is None:
      return _error(start_response, environ, "InvalidAccessKeyId",
                    "The AWS Access Key Id you provided does not exist in our records.")
    body = b""
    if environ["REQUEST_METHOD"] == "POST" and "delete" in query:
      body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
      environ["wsgi.input"] = io.BytesIO(body)
    headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items()
               if k.startswith("HTTP_")}
    why = refusal(namespace, environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/"),
                  query, headers, body)
    if why:
      print(f"denied {namespace}: {why}", file=sys.stderr, flush=True)
      return _error(start_response, environ, "AccessDenied", "Access Denied")
    return self.app(environ, start_response)


def _error(start_response, environ, code: str, message: str):
  body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
          f"<Message>{message}</Message><Resource>{environ.get('PATH_INFO', '')}"
          f"</Resource><RequestId>stand-in</RequestId></Error>").encode()
  start_response("403 Forbidden", [("Content-Type", "application/xml"),
                                   ("Content-Length", str(len(body)))])
  return [] if environ["REQUEST_METHOD"] == "HEAD" else [body]


def main(argv) -> None:
  """HOST PORT ADMIN_KEY NAMESPACES_JSON: moto's server app, as moto_server
  builds it (moto/server.py), behind the policies."""
  from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
  )
  from werkzeug.serving import run_simple
  host, port, admin, namespaces = argv[1], int(argv[2]), argv[3], json.loads(argv[4])
  app = ProfilePolicy(DomainDispatcherApplication(create_backend_app), namespaces, admin)
  run_simple(host, port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
  main(sys.argv)

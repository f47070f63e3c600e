"""STAND-IN for Cloud Storage's JSON API on buckets (`/storage/v1/b`), which
google-cloud-storage 2.19 (the lock's) calls when STORAGE_EMULATOR_HOST
points here (`_helpers.py`): aiplatform's bucket check before every submit
(`utils/gcs_utils.py`@v1.165.1 lines 337-387) and the commands' own
(kubeflow/api/vertex_bucket.py).

What it answers, and nothing more: GET, POST (create) and the IAM policy of
buckets. The project's buckets are the S3 stand-in's (tests/fakes/s3_server.py)
under the same names, owned by the project number; `others` names buckets of
other projects: a number, a bucket the user may read, answered with that
`projectNumber`; None, one the user may not, answered 403. `unreadable`
names buckets of the project's own that answer 403 too: a user granted
object roles only (roles/storage.objectAdmin has no storage.buckets.get),
whose runs Vertex takes. Any other name is 404. Objects are read and
written through S3, not here.

Errors are the JSON API's body, not a gRPC-style `status`: `code`,
`message` and `errors[]` of `domain`, `reason` ("forbidden", "notFound",
"conflict") and `message` (cloud.google.com/storage/docs/json_api/v1/
status-codes, "Error Response Format").
"""

import http.server
import json
import threading
import urllib.parse
from typing import Dict, Iterable, Optional

from tests.fakes.google_apis import JsonHandler


def error(handler: JsonHandler, code: int, reason: str, message: str) -> None:
  """The JSON API's error body (status-codes, "Error Response Format")."""
  handler.send(code, {"error": {"code": code, "message": message, "errors": [
      {"domain": "global", "reason": reason, "message": message}]}})


def storage(handler: JsonHandler, method: str, url, s3, project_number: str,
            others: Optional[Dict[str, Optional[str]]] = None,
            unreadable: Iterable[str] = ()) -> None:
  """Buckets through the JSON API, as aiplatform's
  `gcs_utils.create_gcs_bucket_for_pipeline_artifacts_if_it_does_not_exist`
  calls it: exists, reload, create, get and set the IAM policy."""
  others = others or {}
  parts = url.path[len("/storage/v1/b"):].strip("/").split("/")
  bucket = parts[0] if parts[0] else None
  names = {b["Name"] for b in s3.list_buckets()["Buckets"]}
  if method == "POST" and bucket is None:
    wanted = json.loads(handler.body())["name"]
    if wanted in others:  # bucket names are global (JSON API buckets/insert: 409)
      return error(handler, 409, "conflict", "The requested bucket name is not available. "
                   "The bucket namespace is shared by all users of the system. "
                   "Please select a different name and try again.")
    if wanted in names:
      return error(handler, 409, "conflict", "Your previous request to create the named "
                   "bucket succeeded and you already own it.")
    s3.create_bucket(Bucket=wanted)
    bucket = wanted
  elif (bucket in others and others[bucket] is None) or bucket in unreadable:
    # A caller without storage.buckets.get (nor getIamPolicy) on it: 403, and the message
    # Google gives (JSON API status codes, 403 forbidden; "(or it may not
    # exist)" because Google does not say which).
    return error(handler, 403, "forbidden", "user@example.com does not have "
                 "storage.buckets.get access to the Google Cloud Storage bucket. "
                 "Permission 'storage.buckets.get' denied on resource (or it may "
                 "not exist).")
  elif bucket not in names and bucket not in others:
    # JSON API status codes, 404 notFound; google-cloud-storage@v2.19.0
    # client.py line 962: lookup_bucket answers None on it, bucket.py
    # `exists` False, and aiplatform then creates the bucket.
    return error(handler, 404, "notFound", "The specified bucket does not exist.")
  if parts[1:] == ["iam"]:  # a bucket's policy: what was set is not kept
    policy = json.loads(handler.body()) if method == "PUT" else {"bindings": []}
    return handler.send(200, {"kind": "storage#policy", "etag": "CAE=",
                              "resourceId": f"projects/_/buckets/{bucket}", **policy})
  # The bucket resource's projectNumber (JSON API "Buckets" resource: "The
  # project number of the project the bucket belongs to"), which
  # google-cloud-storage@v2.19.0 bucket.py line 2733 reads and aiplatform
  # compares with the project's (gcs_utils.py lines 85-90).
  handler.send(200, {"kind": "storage#bucket", "id": bucket, "name": bucket,
                     "projectNumber": others.get(bucket) or project_number,
                     "location": "US", "storageClass": "STANDARD", "metageneration": "1"})


class StorageServer:
  """The bucket API on its own, in a thread: `env` points
  google-cloud-storage at it."""

  def __init__(self, s3, project_number: str, others: Dict[str, Optional[str]],
               unreadable: Iterable[str] = ()):
    def answer(method):
      return lambda h: storage(h, method, urllib.parse.urlparse(h.path), s3, project_number,
                               others, unreadable)
    handler = type("Storage", (JsonHandler,), {f"do_{m}": answer(m)
                                               for m in ("GET", "POST", "PUT")})
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    self.server.daemon_threads = True
    threading.Thread(target=self.server.serve_forever, daemon=True).start()
    self.env = {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{self.server.server_address[1]}"}

  def close(self) -> None:
    self.server.shutdown()
    self.server.server_close()

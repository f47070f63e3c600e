"""Where files live: local folders, gs:// and s3://, as TensorFlow opens them.

Every path this project reads or writes goes through TensorFlow's file
system layer (`tf.io.gfile`, TFX's `fileio`), so a URI works wherever TF has
its scheme. TF 2.16 has local paths and gs:// built in. s3:// comes from
tensorflow-io, loaded here on the first s3:// URI; it reads its endpoint and
credentials from the environment only:

  S3_ENDPOINT            the install's store: http://seaweedfs.kubeflow:9000
                         (SeaweedFS, Kubeflow Pipelines 2.16 and later),
                         http://minio-service.kubeflow:9000 (2.5 to 2.15);
                         unset for AWS
  AWS_REGION             e.g. us-east-1
  AWS_ACCESS_KEY_ID      from a Kubernetes secret on a cluster (docs/kubeflow.md)
  AWS_SECRET_ACCESS_KEY  likewise
  S3_USE_HTTPS, S3_VERIFY_SSL   0 for a plain-HTTP endpoint

Beam's own s3:// file system (ImportExampleGen reads through it) is boto3's,
which takes its endpoint from AWS_ENDPOINT_URL_S3; `startup.start` sets that
from S3_ENDPOINT, so that one setting serves both.

Three measured behaviours of tensorflow-io 0.37.1 shape this module:
- `gfile.exists` answers False for a bucket it cannot reach, or one that does
  not exist, so a typo would read as "no spans found" or "no model served".
  `check` asks for the bucket itself, which raises, and turns that into one
  line naming the URI.
TensorFlow's own gs:// raises instead (FailedPreconditionError for a
Cloud Storage it cannot reach): `check` asks for a URI in each gs:// bucket
first, so that is one line too, not a traceback from whichever read came
first.
- an endpoint that refuses connections is retried with backoff for about
  30 s before anything raises; `check` first opens a TCP connection to an
  S3_ENDPOINT, and says in a second what is wrong.
- a process that loaded it aborts at exit ("pure virtual method called",
  exit 134) after its work is done. `exit` ends such a process with the
  status its work deserves, after flushing what it wrote.

Nothing here imports TensorFlow until a URI needs it.

tensorflow-io is installed, and loaded only by `enable`: TFMA imports it
whenever it is installed (tensorflow_model_analysis/utils/model_util.py,
for models that use its ops, which ours do not), and every process that
touches TFMA would then abort at exit. So every entry point's first call,
`startup.start`, marks it absent until `enable` loads it, and TFMA carries
on without it, as it does when it is not installed.
"""

import glob as globbing
import logging
import os
import re
import socket
import sys
import urllib.parse
from typing import Iterable, List, Set

from runtime import startup

S3_BUCKET = re.compile(r"s3://([a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])")
# A gs:// URI up to where a text (a JSON argument, a list) goes on: bucket, path.
GS_URI = re.compile(r"gs://([a-z0-9][a-z0-9._\-]{1,221}[a-z0-9])(/[^\s\"',]*)?")
# Schemes TensorFlow opens here. minio:// is what the open-source Kubeflow
# install names its artifact store; its store speaks S3, so s3:// reaches
# it. From 2.15 that store is SeaweedFS, behind `minio-service` until 2.16
# removed that name (kubeflow/pipelines "Remove minio (#12613)";
# `objectstore/config.go`@2.17.0 line 29).
SCHEMES = ("gs", "s3")
SEAWEEDFS, MINIO = "http://seaweedfs.kubeflow:9000", "http://minio-service.kubeflow:9000"
ADVICE = {
    "minio": f"The install's store speaks S3: use s3://{{rest}} with S3_ENDPOINT set to "
             f"it, {SEAWEEDFS} from Kubeflow Pipelines 2.16, {MINIO} before",
    "gcs": "use gs://{rest}",
    "http": "copy the data into a bucket (gs:// or s3://) or a folder",
    "https": "copy the data into a bucket (gs:// or s3://) or a folder",
}

# Buckets already found usable by this process: a run names the same ones
# many times (the data root when checking records, listing spans, hashing
# the window; the serving dir for the baseline and the verdict).
_reachable: Set[str] = set()


class StorageError(ValueError):
  """A URI this machine cannot use; says which and why, in one line."""


def scheme(uri: str) -> str:
  """`s3`, `gs`, ... or "" for a local path."""
  match = re.match(r"([a-zA-Z][a-zA-Z0-9+.\-]*)://", uri)
  return match.group(1).lower() if match else ""


def check_scheme(uri: str, what: str) -> None:
  """Raises StorageError when TensorFlow cannot open `uri`'s scheme.

  Args:
    uri: a folder or a URI.
    what: what the URI is for, as the user named it (e.g. `--pipeline-root`).
  """
  found = scheme(uri)
  if found and found not in SCHEMES:
    rest = uri.split("://", 1)[1]
    advice = ADVICE.get(found, "use a folder, gs:// or s3://").format(rest=rest)
    raise StorageError(f"{what} {uri}: expected a folder, gs:// or s3://, "
                       f"which TensorFlow opens; found {found}://. {advice}")


def uses_s3(texts: Iterable[str]) -> bool:
  return any("s3://" in t for t in texts if t)


def s3_loaded() -> bool:
  return sys.modules.get("tensorflow_io") is not None


def enable(texts: Iterable[str]) -> None:
  """Loads TensorFlow's s3:// file system if any of `texts` names an s3:// URI."""
  if s3_loaded() or not uses_s3(texts):
    return
  startup.allow_tensorflow_io()
  import tensorflow_io  # noqa: F401  (registers the s3 scheme with TensorFlow)


def check(texts: Iterable[str], what: str = "") -> None:
  """Checks that every s3:// and gs:// bucket named in `texts` can be
  reached and read.

  Loads the s3 file system first. One request per bucket (an s3:// bucket's
  own metadata; a gs:// bucket's first URI named), once per process.

  Raises:
    StorageError: naming the URI and what went wrong: the endpoint cannot be
      reached, the bucket does not exist (s3://), or the credentials were
      rejected.
  """
  texts = list(texts)
  enable(texts)
  _check_gs(texts, what)
  buckets: List[str] = sorted({m for t in texts if t for m in S3_BUCKET.findall(t)}
                              - _reachable)
  if not buckets:
    return
  import tensorflow as tf
  endpoint = os.environ.get("S3_ENDPOINT", "AWS's default endpoint")
  if "S3_ENDPOINT" in os.environ:
    _connect(endpoint, f"{what}s3://{buckets[0]}/")
  for bucket in buckets:
    uri = f"s3://{bucket}/"
    try:
      tf.io.gfile.stat(uri)
    except tf.errors.NotFoundError:
      raise StorageError(f"{what}{uri}: the bucket does not exist at {endpoint} "
                         f"(or these credentials may not see it)") from None
    except tf.errors.OpError as e:
      detail = (e.message or "").strip(": ") or type(e).__name__
      if "curlCode" in detail or "connect" in detail.lower():
        raise StorageError(f"{what}{uri}: cannot reach the S3 endpoint {endpoint} "
                           f"({detail}); set S3_ENDPOINT (and S3_USE_HTTPS=0 for "
                           f"plain HTTP)") from None
      raise StorageError(f"{what}{uri}: S3 at {endpoint} refused: {detail}; check "
                         f"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") from None
    _reachable.add(bucket)


def _check_gs(texts: List[str], what: str) -> None:
  """Reads, for each gs:// bucket named in `texts`, whether its first URI
  there exists: one request per bucket, which TensorFlow's GCS file system
  answers False for a missing object, and raises for a Cloud Storage it
  cannot reach or that refuses these credentials. (Not the bucket's own
  metadata, as for s3://: that needs storage.buckets.get, which a role
  that may read and write the objects need not have.)

  Raises:
    StorageError: naming the URI and what went wrong.
  """
  first = {}
  for bucket, path in (m for t in texts if t for m in GS_URI.findall(t)):
    first.setdefault(bucket, f"gs://{bucket}{path or '/'}")
  pending = sorted((b, uri) for b, uri in first.items() if f"gs://{b}" not in _reachable)
  if not pending:
    return
  import tensorflow as tf
  for bucket, uri in pending:
    try:
      tf.io.gfile.exists(uri)
    except tf.errors.OpError as e:
      detail = " ".join((e.message or type(e).__name__).split())
      if "curl" in detail or "resolve" in detail.lower() or "connect" in detail.lower():
        raise StorageError(f"{what}{uri}: cannot reach Cloud Storage ({detail}); check "
                           "this machine's network and proxy") from None
      raise StorageError(f"{what}{uri}: Cloud Storage refused: {detail}; check "
                         "GOOGLE_APPLICATION_CREDENTIALS (or gcloud auth "
                         "application-default login)") from None
    _reachable.add(f"gs://{bucket}")


def _connect(endpoint: str, uri: str) -> None:
  """Opens and closes a TCP connection to S3_ENDPOINT (scheme-less, as
  tensorflow-io accepts it, means S3_USE_HTTPS's), within
  S3_CONNECT_TIMEOUT_MSEC or 10 s.

  Raises:
    StorageError: the endpoint cannot be reached.
  """
  secure = os.environ.get("S3_USE_HTTPS", "1") != "0"
  parsed = urllib.parse.urlsplit(endpoint if "://" in endpoint else
                                 f"{'https' if secure else 'http'}://{endpoint}")
  port = parsed.port or (443 if parsed.scheme == "https" else 80)
  timeout = int(os.environ.get("S3_CONNECT_TIMEOUT_MSEC", "10000")) / 1000
  try:
    socket.create_connection((parsed.hostname, port), timeout=timeout).close()
  except OSError as e:
    raise StorageError(f"{uri}: cannot reach the S3 endpoint {endpoint} ({e}); set "
                       f"S3_ENDPOINT (and S3_USE_HTTPS=0 for plain HTTP)") from None


def glob(pattern: str) -> List[str]:
  """Sorted paths matching `pattern`; local ones without TensorFlow's import."""
  return sorted(gfile().glob(pattern) if scheme(pattern) else globbing.glob(pattern))


def isdir(path: str) -> bool:  # as `glob`
  return gfile().isdir(path) if scheme(path) else os.path.isdir(path)


def gfile():
  """TensorFlow's file system layer, imported on first use, not on import:
  a command imports its packages before its `__main__` sets the process up
  (startup.start), and the set-up must come before TensorFlow loads."""
  import tensorflow as tf
  return tf.io.gfile


def exit(status: int) -> None:  # it is the process's exit
  """Ends the process with `status`.

  After the s3 file system was loaded, the interpreter's own shutdown aborts
  (exit 134) in tensorflow-io's destructors; so flush what Python buffers
  and leave without running them. Every file was closed by then: a step's
  outputs are written before it returns.
  """
  if not s3_loaded():
    sys.exit(status)
  logging.shutdown()
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except (OSError, ValueError):
      pass
  os._exit(status)

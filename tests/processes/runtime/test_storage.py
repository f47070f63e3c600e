"""s3:// for real: a bucket that cannot be used is one clear line, and a process
that loaded the S3 file system exits with its own status.

Against tests/fakes/s3_server.py, moto's S3 server on 127.0.0.1 (a STAND-IN for a
cloud bucket). Every process that loads the S3 file system here is a
subprocess: tensorflow-io aborts at exit (134) in any process that loaded
it, and `storage.exit` is what prevents that.
"""

import os
import subprocess
import sys

from tests.conftest import REPO
from tests.fakes.s3_server import env, free_port, s3_server


def python(code: str, extra_env: dict, *args):
  return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True,
                        text=True, env={**os.environ, **extra_env}, timeout=600)


CHECK = """
import sys
from runtime import storage
try:
  storage.check([sys.argv[1]], "--data-root ")
  print("ok")
  status = 0
except storage.StorageError as e:
  print(f"error: {e}")
  status = 2
storage.exit(status)
"""


def test_a_reachable_bucket_passes_and_the_process_exits_0():
  with s3_server(buckets=("data",)) as (endpoint, _):
    proc = python(CHECK, env(endpoint), "s3://data/digits")
  assert (proc.returncode, proc.stdout.strip()) == (0, "ok"), proc.stderr[-2000:]


def test_a_missing_bucket_is_one_line_naming_it():
  with s3_server(buckets=("data",)) as (endpoint, _):
    proc = python(CHECK, env(endpoint), "s3://no-such-bucket/digits")
  assert proc.returncode == 2, proc.stderr[-2000:]
  assert proc.stdout.strip() == (f"error: --data-root s3://no-such-bucket/: the bucket does "
                                 f"not exist at {endpoint} (or these credentials may not "
                                 f"see it)")


def test_an_unreachable_endpoint_is_one_line_not_a_silent_false():
  endpoint = f"http://127.0.0.1:{free_port()}"
  proc = python(CHECK, {**env(endpoint), "S3_CONNECT_TIMEOUT_MSEC": "1000"}, "s3://data/x")
  assert proc.returncode == 2, proc.stderr[-2000:]
  assert proc.stdout.startswith(
      f"error: --data-root s3://data/: cannot reach the S3 endpoint {endpoint}"), proc.stdout


def test_rejected_credentials_are_one_line():
  with s3_server(auth=True) as (endpoint, _):
    proc = python(CHECK, env(endpoint), "s3://data/x")
  assert proc.returncode == 2, proc.stderr[-2000:]
  assert proc.stdout.startswith(f"error: --data-root s3://data/: S3 at {endpoint} refused"), \
      proc.stdout


def test_a_failure_after_loading_s3_exits_1_not_134():
  code = "from runtime import storage\nstorage.enable(['s3://b/x'])\nstorage.exit(1)"
  proc = python(code, env("http://127.0.0.1:1"))
  assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
  assert "pure virtual method called" not in proc.stderr


def test_a_process_that_imports_tfma_exits_cleanly():
  """TFMA imports tensorflow-io whenever it is installed; the project's
  entry points' first call keeps it unloaded, so they exit 0, not 134."""
  proc = python("import sys\nfrom runtime import startup\nstartup.start()\nimport tensorflow_model_analysis\n"
                "assert sys.modules.get('tensorflow_io') is None", {})
  assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
  assert "pure virtual method called" not in proc.stderr



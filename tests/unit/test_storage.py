"""s3:// for real: a bucket that cannot be used is one clear line, and a process
that loaded the S3 file system exits with its own status.

Against tests/fakes/s3_server.py, moto's S3 server on 127.0.0.1 (a STAND-IN for a
cloud bucket). Every process that loads the S3 file system here is a
subprocess: tensorflow-io aborts at exit (134) in any process that loaded
it, and `storage.exit` is what prevents that.
"""

import functools
import os
import subprocess
import sys

import pytest

import storage
from convert.digits import write_digits
from metadata import store as st
from tests.conftest import REPO
from tests.fakes.s3_server import env, free_port, s3_server, upload_folder


def python(code: str, extra_env: dict, *args):
  import os
  return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True,
                        text=True, env={**os.environ, **extra_env}, timeout=600)


CHECK = """
import sys, storage
try:
  storage.check([sys.argv[1]], "--data-root ")
  print("ok")
  status = 0
except storage.StorageError as e:
  print(f"error: {e}")
  status = 2
storage.exit(status)
"""


@pytest.mark.parametrize("uri,message", [
    ("minio://mlpipeline/v2/artifacts", "found minio://. MinIO speaks S3: use "
     "s3://mlpipeline/v2/artifacts with S3_ENDPOINT"),
    ("hdfs://nn/data", "expected a folder, gs:// or s3://"),
])
def test_schemes_tensorflow_cannot_open_are_refused_with_what_to_use(uri, message):
  with pytest.raises(storage.StorageError, match="--pipeline-root " + uri) as e:
    storage.check_scheme(uri, "--pipeline-root")
  assert message in str(e.value)


@pytest.mark.parametrize("uri,found", [("/data/x", ""), ("relative/x", ""),
                                       ("gs://b/x", "gs"), ("S3://b/x", "s3")])
def test_folders_gs_and_s3_are_accepted(uri, found):
  assert storage.scheme(uri) == found
  assert storage.check_scheme(uri, "--data-root") is None  # raises for the others


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
  code = "import storage\nstorage.enable(['s3://b/x'])\nstorage.exit(1)"
  proc = python(code, env("http://127.0.0.1:1"))
  assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
  assert "pure virtual method called" not in proc.stderr


def test_a_process_that_imports_tfma_exits_cleanly():
  """TFMA imports tensorflow-io whenever it is installed; the project's
  entry points' first call keeps it unloaded, so they exit 0, not 134."""
  proc = python("import startup, sys\nstartup.start()\nimport tensorflow_model_analysis\n"
                "assert sys.modules.get('tensorflow_io') is None", {})
  assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
  assert "pure virtual method called" not in proc.stderr


def _statistics_runs(client) -> set:
  """The StatisticsGen outputs in the bucket: their execution folders."""
  return {o["Key"].split("/")[3] for o in client.list_objects_v2(
      Bucket="pipelines", Prefix="root/StatisticsGen/").get("Contents", [])}


@pytest.mark.e2e
def test_local_runner_reads_and_writes_s3_and_retention_deletes_there(tmp_path):
  """Data, pipeline root and serving dir on s3://; the run stops after
  StatisticsGen (a partial run) and exits 0, with its artifacts in the
  bucket. A second such run, without the cache and keeping one run
  (`--keep-runs 1`), deletes the first run's artifacts from the bucket."""
  write_digits(str(tmp_path / "digits"))
  args = [sys.executable, "local_runner.py", "--data-root", "s3://data/digits",
          "--pipeline-root", "s3://pipelines/root", "--serving-dir", "s3://pipelines/serving",
          "--output-dir", str(tmp_path / "runs"), "--to-node", "StatisticsGen"]
  with s3_server(buckets=("data", "pipelines")) as (endpoint, client):
    upload_folder(client, str(tmp_path / "digits"), "s3://data/digits")
    run = functools.partial(subprocess.run, cwd=REPO, capture_output=True, text=True,
                            timeout=1800, env={**os.environ, **env(endpoint)})
    proc = run(args)
    keys = [o["Key"] for o in client.list_objects_v2(
        Bucket="pipelines", Prefix="root/StatisticsGen/").get("Contents", [])]
    first = _statistics_runs(client)
    again = run(args + ["--no-cache", "--keep-runs", "1"])
    second = _statistics_runs(client)
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
  assert "pure virtual method called" not in proc.stderr
  assert any(k.endswith("Split-eval/FeatureStats.pb") for k in keys), keys
  assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
  assert "retention: deleted " in again.stdout and "of 1 older run(s)" in again.stdout, \
      again.stdout[-2000:]
  assert len(first) == 1 and len(second) == 1 and first != second, (first, second)
  store = st.open_store(str(tmp_path / "runs" / "digits" / "metadata.sqlite"))
  gone = [a.uri for a in store.get_artifacts() if a.state == a.DELETED]
  assert any(f"/StatisticsGen/statistics/{next(iter(first))}" in uri for uri in gone), gone


@pytest.mark.e2e
def test_local_runner_names_a_bucket_it_cannot_use_and_exits_2(tmp_path):
  with s3_server(buckets=("data",)) as (endpoint, _):
    proc = subprocess.run(
        [sys.executable, "local_runner.py", "--data-root", "s3://missing-bucket/digits",
         "--output-dir", str(tmp_path / "runs")], cwd=REPO, capture_output=True, text=True,
        timeout=600, env={**__import__("os").environ, **env(endpoint)})
  assert proc.returncode == 2, proc.stderr[-3000:]
  assert proc.stderr.strip().splitlines()[-1] == (
      f"error: s3://missing-bucket/: the bucket does not exist at {endpoint} (or these "
      f"credentials may not see it)")

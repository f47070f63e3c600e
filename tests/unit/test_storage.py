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

import numpy as np
import pytest
import yaml

import storage
from convert.digits import load_images
from convert.rows import write_rows
from metadata import store as st
from tests.conftest import REPO
from tests.fakes.s3_server import download, env, free_port, s3_server, upload_folder


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


def raw_regression_spans(root) -> dict:
  """Two spans of raw 8x8 digits, each split train/eval, in `root/local`;
  the label is the image's mean brightness. Returns the declaration."""
  images, _ = load_images()
  rows = [{"image": [images[i].tobytes()],
           "brightness": [float(images[i].mean() / 255.0)]} for i in range(600)]
  for span, part in ((1, rows[:300]), (2, rows[300:])):
    write_rows(part, str(root / "local" / f"span-{span}"), "digits", eval_percent=25)
  return {
      "name": "raw",
      "data": {"root": "s3://data/raw", "compression": "GZIP", "window": 2,
               "splits": {"train": "span-{SPAN}/train/*.tfrecord.gz",
                          "eval": "span-{SPAN}/eval/*.tfrecord.gz"}},
      "label": {"name": "brightness", "kind": "regression"},
      "features": {"image": {"kind": "image", "encoding": "raw", "height": 8, "width": 8,
                             "channels": 1}},
      # Measured: eval RMSE 0.013 to 0.017 after 60 steps; predicting the
      # mean scores 0.033 (the label's spread), which this refuses.
      "evaluation": {"metric": "rmse", "threshold": 0.025}}


@pytest.mark.e2e
def test_local_runner_runs_on_s3_and_retention_deletes_there(tmp_path):
  """Data, pipeline root and serving dir on s3://: raw pixels over two spans
  and a float label, a whole run. Its preprocessing has no analyzer, so
  Transform's analyzer cache output holds no object, and on S3 a prefix
  without an object does not exist (the run failed at Transform before
  components/transform.py `publish` stopped assuming the folder); DriftGate
  compares span 2 with span 1; the pushed model answers `value`. A second
  run, to StatisticsGen, without the cache and keeping one run
  (`--keep-runs 1`), deletes from the bucket what only the first used (its
  anomalies), not what the served model came from."""
  decl = raw_regression_spans(tmp_path)
  (tmp_path / "raw.yaml").write_text(yaml.safe_dump(decl))
  args = [sys.executable, "local_runner.py", "--dataset", str(tmp_path / "raw.yaml"),
          "--pipeline-root", "s3://pipelines/root", "--serving-dir", "s3://serving/raw",
          "--output-dir", str(tmp_path / "runs"), "--train-steps", "60"]
  with s3_server(buckets=("data", "pipelines", "serving")) as (endpoint, client):
    upload_folder(client, str(tmp_path / "local"), "s3://data/raw")
    run = functools.partial(subprocess.run, cwd=REPO, capture_output=True, text=True,
                            timeout=1800, env={**os.environ, **env(endpoint)})
    proc = run(args)
    cache = [o["Key"] for o in client.list_objects_v2(
        Bucket="pipelines", Prefix="root/analyzer_cache/").get("Contents", [])]
    again = run(args + ["--to-node", "StatisticsGen", "--no-cache", "--keep-runs", "1"])
    serving = download(client, "s3://serving/raw", tmp_path / "serving")
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
  assert "pure virtual method called" not in proc.stderr
  assert "drift: none beyond the thresholds (train_span2 against span 1" in proc.stdout, \
      proc.stdout[-3000:]
  assert cache == [], cache  # raw images alone: no analyzer, nothing cached
  assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
  assert "retention: deleted " in again.stdout and "of 1 older run(s)" in again.stdout, \
      again.stdout[-2000:]
  store = st.open_store(str(tmp_path / "runs" / "raw" / "metadata.sqlite"))
  gone = [a.uri for a in store.get_artifacts() if a.state == a.DELETED]
  assert any("/ExampleValidator/anomalies/" in uri for uri in gone), gone
  assert not any("/Trainer/" in uri for uri in gone), gone
  (version,) = [v for v in os.listdir(serving) if v.isdigit()]
  import tensorflow as tf
  serve = tf.saved_model.load(os.path.join(serving, version)).signatures["serving_default"]
  files = sorted(str(f) for f in (tmp_path / "local").rglob("eval/*.tfrecord.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP").take(16)]
  value = serve(examples=tf.constant(records))["value"].numpy()
  assert value.shape == (16, 1) and np.isfinite(value).all(), value


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

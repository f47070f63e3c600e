"""The digits pipeline on Beam's portable runner, with SDK workers in a
separate worker pool that has only the image's environment.

This is how Flink, Spark and Dataflow run Python: workers are fresh
processes, started by a pool in the image, that import none of our
packages and unpickle TFX's, TFT's and TFMA's functions. Whatever process
set-up they get comes from the image's ENV lines (kubeflow/Dockerfile), not
from what the launching process imported: without TF_USE_LEGACY_KERAS
there, the Evaluator's workers load the model with Keras 3 and fail ("File
format not supported"). Beam's own job service runs in the runner's process
(`--job_endpoint=embed`); the pool is Beam's `worker_pool_main` on
127.0.0.1, started in an empty folder.

What only a cluster proves: the image itself on the cluster's nodes, its
staging of artifacts, and the runners' own job services (docs/kubeflow.md).
"""

import os
import subprocess
import sys
import threading
import time

import psutil
import pytest

from tests.fakes.s3_server import free_port
from tests.runs import run_local
from tests.unit.test_docker_image import image_env

pytestmark = [pytest.mark.e2e, pytest.mark.long]


def pool_env() -> dict:
  """The image's environment, with this venv where the image has /opt/venv."""
  env = image_env()
  env["PATH"] = env["PATH"].replace("/opt/venv/bin", os.path.dirname(sys.executable)) \
      .replace("$PATH", "/usr/bin:/bin")
  env["HOME"] = env["TMPDIR"] = os.environ.get("TMPDIR", "/tmp")
  return env


def test_the_digits_push_with_beam_workers_in_a_pool_of_their_own(tmp_path):
  env = pool_env()
  assert env["TF_USE_LEGACY_KERAS"] == "1", env
  port = free_port()
  (tmp_path / "pool").mkdir()
  with open(tmp_path / "pool.log", "w") as log:
    pool = subprocess.Popen(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
         f"--service_port={port}"], cwd=tmp_path / "pool", env=env, stdout=log,
        stderr=subprocess.STDOUT)
  workers, done = set(), threading.Event()

  def watch():  # the pool's worker processes, as they come and go
    while not done.is_set():
      try:
        workers.update(c.pid for c in psutil.Process(pool.pid).children(recursive=True))
      except psutil.NoSuchProcess:
        return
      time.sleep(0.2)
  threading.Thread(target=watch, daemon=True).start()
  try:
    code, out, err = run_local(
        "--output-dir", str(tmp_path / "out"), "--data-root", str(tmp_path / "data"),
        "--train-steps", "200",
        f"--beam-args=--runner=PortableRunner --job_endpoint=embed "
        f"--environment_type=EXTERNAL --environment_config=127.0.0.1:{port}")
  finally:
    done.set()
    pool.terminate()
    pool.wait(timeout=60)
  assert code == 0, out[-2000:] + err[-3000:] + (tmp_path / "pool.log").read_text()[-3000:]
  assert out.strip().splitlines()[-1].startswith("pushed model: "), out[-2000:]
  assert workers, "no SDK worker ran in the pool: the run did not use it"

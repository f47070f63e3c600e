"""A push to an object store, watched by a poller the way a model server
polls its base path, on the S3 protocol (tests/fakes/s3_server.py, moto: a
STAND-IN for S3, GCS or MinIO, which no test here can reach).

On an object store a folder is only a prefix: a version's folder is listed
as soon as its first object lands, and a folder rename is a copy, object by
object (tensorflow-io copies in listing order, so `saved_model.pb` would
arrive before `variables/`). What the push guarantees is that the moment a
numbered folder lists `saved_model.pb`, it lists every file of the model:
a server that loads a version when it finds its SavedModel file never
loads half a model, and a killed push leaves nothing that loads.

The push runs in its own process, which loads TensorFlow's s3 file system;
this process reads the bucket through boto3.
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO
from tests.fakes.s3_server import env, s3_server

pytestmark = pytest.mark.e2e

PUSH = ("import serving, sys\nfrom runtime import storage\n"
        "print(serving.push(sys.argv[1], sys.argv[2]))\n"
        "storage.exit(0)\n")


def small_model(folder: str) -> list:
  """A SavedModel with a 24 MB variable, so that copying it takes a while;
  returns its files' relative paths."""
  module = tf.Module()
  module.w = tf.Variable(np.ones((6_000_000,), np.float32))

  @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
  def serve(x):
    return {"y": x * module.w[0]}
  tf.saved_model.save(module, folder, signatures={"serving_default": serve})
  return sorted(os.path.relpath(os.path.join(d, f), folder)
                for d, _, files in os.walk(folder) for f in files)


def _listing(client, bucket: str, prefix: str) -> dict:
  """version folder -> the files it lists, relative to it."""
  found = {}
  for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for obj in page.get("Contents", []):
      version, _, rest = obj["Key"][len(prefix):].partition("/")
      found.setdefault(version, set()).add(rest)
  return found


class Poller(threading.Thread):
  """Lists the serving dir again and again; records every listing in which
  a numbered folder shows `saved_model.pb` without the whole model, and
  loads each version the first time it shows it."""

  def __init__(self, client, files, folder):
    super().__init__(daemon=True)
    self.client, self.files, self.folder = client, set(files), folder
    self.stop, self.listings, self.bad, self.loaded = threading.Event(), 0, [], {}

  def run(self):
    while not self.stop.is_set():
      for version, listed in _listing(self.client, "serving", "m/").items():
        self.listings += 1
        if not version.isdigit() or "saved_model.pb" not in listed:
          continue
        if not self.files <= listed:
          self.bad.append((version, sorted(self.files - listed)))
        elif version not in self.loaded:
          self.loaded[version] = self._load(version)

  def _load(self, version) -> str:
    local = os.path.join(self.folder, version)
    for name in self.files:
      os.makedirs(os.path.dirname(os.path.join(local, name)), exist_ok=True)
      self.client.download_file("serving", f"m/{version}/{name}", os.path.join(local, name))
    try:
      served = tf.saved_model.load(local).signatures["serving_default"]
      return f"{float(served(x=tf.constant([2.0]))['y'][0]):.1f}"
    except Exception as e:  # noqa: BLE001  (recorded, asserted on)
      return f"failed: {type(e).__name__}: {e}"


def _start_push(model: str, endpoint: str) -> subprocess.Popen:
  return subprocess.Popen([sys.executable, "-c", PUSH, model, "s3://serving/m"], cwd=REPO,
                          env={**os.environ, **env(endpoint)}, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def _push(model: str, endpoint: str) -> str:
  proc = _start_push(model, endpoint)
  out, err = proc.communicate(timeout=600)
  assert proc.returncode == 0, err[-3000:]
  return out.strip()


def _killed_push(model: str, endpoint: str, client) -> None:
  """A push killed as soon as its numbered folder appears."""
  proc = _start_push(model, endpoint)
  deadline = time.time() + 600
  while time.time() < deadline and proc.poll() is None:
    if len([v for v in _listing(client, "serving", "m/") if v.isdigit()]) > 2:
      break
    time.sleep(0.02)
  proc.send_signal(signal.SIGKILL)
  proc.wait(timeout=60)


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
  root = tmp_path_factory.mktemp("store_push")
  files = small_model(str(root / "model"))
  with s3_server(buckets=("serving",)) as (endpoint, client), \
       tempfile.TemporaryDirectory() as downloads:
    poller = Poller(client, files, downloads)
    poller.start()
    try:
      pushes = [_push(str(root / "model"), endpoint) for _ in range(2)]
      _killed_push(str(root / "model"), endpoint, client)
    finally:
      poller.stop.set()
      poller.join(timeout=600)
    yield {"poller": poller, "pushes": pushes, "files": files,
           "after_kill": _listing(client, "serving", "m/")}


def test_a_poller_never_lists_a_saved_model_without_the_rest(watched):
  poller = watched["poller"]
  assert poller.listings > 20, f"expected the poller to list often, found {poller.listings}"
  assert not poller.bad, f"saved_model.pb listed before the model was whole: {poller.bad[:3]}"


def test_every_version_the_poller_found_loads_and_serves(watched):
  loaded = watched["poller"].loaded
  pushed = {p.rsplit("/", 1)[-1] for p in watched["pushes"]}
  assert pushed <= set(loaded), (pushed, loaded)
  assert set(loaded.values()) == {"2.0"}, loaded


def test_a_killed_push_leaves_nothing_a_server_loads(watched):
  files = set(watched["files"])
  for version, listed in watched["after_kill"].items():
    if version.isdigit() and "saved_model.pb" in listed:
      assert files <= listed, f"version {version} lists saved_model.pb but lacks " \
                              f"{sorted(files - listed)}"
  complete = [v for v, listed in watched["after_kill"].items()
              if v.isdigit() and "saved_model.pb" in listed]
  assert len(complete) >= 2, watched["after_kill"].keys()

"""A push killed half way (a process blocked on a FIFO, then SIGKILL) never
becomes the newest version of the serving dir."""

import os
import subprocess
import sys
import time

from serving import latest, push
from tests.conftest import REPO, model_dir


def test_a_push_killed_half_way_leaves_the_served_version_newest(tmp_path):
  serving = tmp_path / "serving"
  served = push(model_dir(str(tmp_path / "v1")), str(serving))
  assert latest(str(serving)) == served

  blocked = model_dir(str(tmp_path / "v2"), blocking=True)
  proc = subprocess.Popen(
      [sys.executable, "-c", "import sys; from serving import push; "
       "push(sys.argv[1], sys.argv[2])", blocked, str(serving)], cwd=REPO)
  try:
    deadline = time.time() + 300
    while not any(n.startswith(".tmp-") for n in os.listdir(serving)):
      assert proc.poll() is None, "the push ended instead of blocking"
      assert time.time() < deadline, "no temporary folder after 300 s"
      time.sleep(0.2)
    time.sleep(1)
  finally:
    proc.kill()
    proc.wait()
  names = os.listdir(serving)
  assert [n for n in names if n.isdigit()] == [os.path.basename(served)]
  assert len([n for n in names if n.startswith(".tmp-")]) == 1
  # What a model server and BaselineModel see: the first version, whole.
  assert latest(str(serving)) == served

  # The next push completes, and is newer than every version before it.
  second = push(model_dir(str(tmp_path / "v3")), str(serving))
  assert int(os.path.basename(second)) > int(os.path.basename(served))
  assert latest(str(serving)) == second
  with open(os.path.join(second, "saved_model.pb"), "rb") as f:
    assert f.read() == b"model"



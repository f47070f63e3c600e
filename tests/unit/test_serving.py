"""The serving dir: which versions count, atomic pushes, and what a version records."""

import json
import os
import subprocess
import sys
import time

import serving
from serving import history, latest, push
from tests.conftest import REPO


def model_dir(folder, blocking=False):
  os.makedirs(os.path.join(folder, "variables"))
  with open(os.path.join(folder, "saved_model.pb"), "wb") as f:
    f.write(b"model")
  if blocking:
    # Reading a FIFO with no writer waits forever: the copy stops right there,
    # half done, as a push interrupted by a crash or a preempted node would.
    os.mkfifo(os.path.join(folder, "variables", "variables.data-00000-of-00001"))
  return folder


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


def test_the_newest_complete_numbered_folder_is_the_served_version(tmp_path):
  base = tmp_path / "serving"
  assert latest(str(base)) is None
  for version, complete in (("100", True), ("300", False), ("200", True),
                            (".tmp-400-abc", True)):
    (base / version).mkdir(parents=True)
    if complete:
      (base / version / "saved_model.pb").write_bytes(b"x")
  # 300 has no saved_model.pb (a push cut short); .tmp-400 is not a version.
  assert serving.versions(str(base)) == [str(base / "200"), str(base / "100")]
  assert latest(str(base)) == str(base / "200")
  assert serving.baseline_version(str(base), "") == "200"
  assert serving.baseline_version(str(tmp_path / "empty"), "") == serving.NONE


def test_a_version_trained_with_this_runs_key_is_not_its_baseline(tmp_path):
  base = tmp_path / "serving"
  for version, key in (("100", "k-old"), ("200", "k-this-run")):
    model_dir(str(base / version))
    serving.record(str(base / version), ["train_span1"], key)
  assert serving.recorded_key(str(base / "200")) == "k-this-run"
  assert serving.trained_on(str(base / "100")) == ["train_span1"]
  assert serving.baseline_version(str(base), "k-this-run") == "100"
  assert serving.baseline_version(str(base), "k-new-data") == "200"


def test_an_interrupted_push_is_never_taken_for_a_pushed_copy(tmp_path):
  # A killed push leaves a temporary folder whose fingerprint.pb may be
  # copied before its variables; a retry must push again, not record it.
  model = model_dir(str(tmp_path / "model"))
  with open(os.path.join(model, "fingerprint.pb"), "wb") as f:
    f.write(b"fp-1")
  base = tmp_path / "serving"
  half = base / ".tmp-500-deadbeef"
  half.mkdir(parents=True)
  (half / "fingerprint.pb").write_bytes(b"fp-1")
  assert serving.find_copy(model, str(base)) is None
  pushed = push(model, str(base))
  assert serving.find_copy(model, str(base)) == pushed


def _serving(*args):
  return subprocess.run([sys.executable, "-m", "serving", *args], cwd=REPO,
                        capture_output=True, text=True, timeout=300)


def test_rollback_pushes_a_copy_of_the_earlier_version_as_the_newest(tmp_path):
  base = tmp_path / "serving"
  judged = {"metric": "accuracy", "value": 0.95, "baseline_value": None,
            "judged_against": "none", "pipeline_run": "run-1", "pushed_unix": 1}
  good = push(model_dir(str(tmp_path / "good")), str(base),
              extra={serving.BLESSED: json.dumps(judged)})
  serving.record(good, ["train_span1"], "k-good")
  bad_model = model_dir(str(tmp_path / "bad"))
  serving.record(bad_model, ["train_span2"], "k-bad")
  bad = push(bad_model, str(base))
  before = sorted(os.listdir(base))

  proc = _serving("rollback", "--serving-dir", str(base))
  assert proc.returncode == 0, proc.stderr[-2000:]
  newest = latest(str(base))
  assert newest not in (good, bad) and int(os.path.basename(newest)) > int(
      os.path.basename(bad)), (newest, good, bad)
  assert f"is a copy of {os.path.basename(good)}" in proc.stdout, proc.stdout
  # Nothing deleted; the copy is the good model, and says what it replaced.
  assert set(before) <= set(os.listdir(base))
  assert serving.trained_on(newest) == ["train_span1"]
  assert history.rolled_back(newest) == {"to": os.path.basename(good),
                                         "from": os.path.basename(bad)}
  # The next run compares with the model actually served: the copy, even
  # when it trains on the bad model's data and settings again.
  assert serving.baseline_version(str(base), "k-bad") == os.path.basename(newest)

  listed = _serving("versions", "--serving-dir", str(base))
  assert listed.returncode == 0, listed.stderr[-2000:]
  lines = listed.stdout.strip().splitlines()
  assert len(lines) == 3 and lines[0].startswith(f"{os.path.basename(newest)}  served"), lines
  assert f"rollback: a copy of {os.path.basename(good)} (replacing " \
         f"{os.path.basename(bad)})" in lines[0], lines[0]
  assert "trained on train_span2" in lines[1], lines[1]
  # What blessed each version, from the version's own record: the copy
  # keeps the original's; a version pushed without one says so.
  assert "accuracy 0.9500" in lines[0] and "accuracy 0.9500" in lines[2], lines
  assert "blessing: not recorded" in lines[1], lines[1]


def test_rollback_to_a_version_that_is_not_there_is_one_line(tmp_path):
  base = tmp_path / "serving"
  push(model_dir(str(tmp_path / "only")), str(base))
  proc = _serving("rollback", "--serving-dir", str(base))
  assert proc.returncode == 2 and proc.stderr.strip().startswith(
      f"error: {base}: nothing to roll back to: one complete version"), proc.stderr
  proc = _serving("rollback", "--serving-dir", str(base), "--to", "12345")
  assert proc.returncode == 2 and "version 12345: expected one of" in proc.stderr, proc.stderr
  assert len([n for n in os.listdir(base) if n.isdigit()]) == 1

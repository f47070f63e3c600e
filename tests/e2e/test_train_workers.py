"""`local_runner.py --train-workers 2`: the Trainer launches two worker
processes (launcher/local.py) that train one model under
MultiWorkerMirroredStrategy, as a job on a cluster would; then a worker
killed mid-training fails the run, naming it."""

import json
import os
import re
import signal
import time

import pytest

from metadata import outcome
from tests.runs import run_local, start_local

ROLE = re.compile(r"^\[worker (\d)\] training job worker: worker (\d) of 2 \(pid (\d+)\)$", re.M)
SHARD = re.compile(r"^\[worker (\d)\] input shard (\d) of 2: (.*)$", re.M)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
  root = tmp_path_factory.mktemp("workers")
  args = ["--output-dir", str(root / "out"), "--data-root", str(root / "data")]
  code, out, err = run_local(*args, "--train-workers", "2", "--train-steps", "200")
  metadata = str(root / "out" / "digits" / "metadata.sqlite")
  return {"code": code, "stdout": out, "stderr": err, "args": args, "root": root,
          "outcome": outcome.read_outcome(metadata, "digits") if code == 0 else None}


def test_two_worker_processes_train_one_model_that_is_judged_and_pushed(two_workers):
  assert two_workers["code"] == 0, two_workers["stderr"][-3000:]
  err = two_workers["stderr"]
  assert sorted((int(a), int(b)) for a, b, _ in ROLE.findall(err)) == [(0, 0), (1, 1)], \
      f"expected one role line from each of two workers, found:\n{err[-3000:]}"
  result = two_workers["outcome"]
  assert result.blessed and result.value >= 0.9, (result.value, result.reasons)
  assert os.listdir(result.pushed_dir), f"nothing pushed in {result.pushed_dir}"


def test_each_worker_reads_its_own_files_and_together_all_of_them(two_workers):
  shards = {int(w): line for w, _, line in SHARD.findall(two_workers["stderr"])}
  assert set(shards) == {0, 1}, two_workers["stderr"][-3000:]
  files = [set(line.split(": ", 1)[1].split(", ")) for line in shards.values()]
  assert files[0] and files[1] and not files[0] & files[1], shards
  assert all(f.startswith("Split-train/") for f in files[0] | files[1]), shards


def test_only_the_chief_exports_into_the_trainers_output(two_workers):
  root = two_workers["root"] / "out" / "digits" / "pipeline_root" / "Trainer"
  exports = [p for p in root.rglob("saved_model.pb")]
  assert len(exports) == 1 and "Format-Serving" in str(exports[0]), exports
  inputs = list(root.rglob("job/inputs.json"))
  assert len(inputs) == 1, inputs
  assert json.loads(inputs[0].read_text())["custom_config"]["workers"] == {
      "count": 2, "engine": "local"}


def test_a_worker_killed_mid_training_fails_the_run_naming_it(two_workers):
  proc = start_local(*two_workers["args"], "--train-workers", "2", "--train-steps", "100000")
  err, pids = [], {}
  for line in proc.stderr:
    err.append(line)
    role = ROLE.match(line.rstrip())
    if role:
      pids[int(role.group(1))] = int(role.group(3))
    if SHARD.match(line.rstrip()) and 1 in pids:
      time.sleep(2)  # into the training
      os.kill(pids[1], signal.SIGKILL)
      break
  out, rest = proc.communicate(timeout=600)
  err = "".join(err) + rest
  assert proc.returncode != 0, err[-3000:]
  assert re.search(r"training job train-[0-9a-f]{12}: worker 1 was killed by SIGKILL", err), \
      err[-3000:]
  with pytest.raises(ProcessLookupError):  # its peer was stopped, not left waiting
    os.kill(pids[0], 0)

"""A training killed mid-way (a worker process, SIGKILL) resumes from its
checkpoint, with one worker and with two."""

import dataclasses
import json
import time

import pytest
import tensorflow as tf

from tests.training import (
  CONFIG,
  MIN_ACCURACY,
  finish,
  start_workers,
  write_setup,
)


# `fit` on one worker is the compiled Trainer's case: tests/e2e/test_kubeflow_steps.py
# kills it at its first checkpoint, and the retry resumes and serves >= 0.95.
@pytest.mark.parametrize("loop,workers", [("custom", 1), ("custom", 2)])
def test_a_killed_training_resumes_from_its_checkpoint(digits, tmp_path, loop, workers):
  """A training killed (SIGKILL, as a preempted pod) after its first
  checkpoint, then started again as a retry is: it resumes, says so, ends
  as accurate as an uninterrupted one, and deletes its checkpoints. `fit`
  resumes in a retried Kubeflow Trainer (test_kubeflow_steps) and, with two
  workers, in a restarted TrainJob (test_train_workers)."""
  # One worker: the accuracy needs the 400 steps an uninterrupted one takes
  # (tests/integration/trainer/test_loop.py). Two: only the resume is checked, and each
  # step waits on the other worker; 24 still leave 21 steps after the first
  # checkpoint (at 3), far longer than the kill takes to follow it.
  steps = 400 if workers == 1 else 24
  config = dataclasses.replace(CONFIG, loop=loop, train_steps=steps,
                               checkpoint_every=steps // 8,
                               **({} if workers == 1 else {"batch_size": 16}))
  saved = tmp_path / "checkpoints"
  setup = write_setup(digits, tmp_path, config, checkpoints=str(saved),
                 log_dir=str(tmp_path / "logs"))
  first = start_workers(setup, str(tmp_path / "first"), workers)
  while tf.train.latest_checkpoint(str(saved / "chief")) is None:
    assert all(p.poll() is None for p in first), "a worker ended before its first checkpoint"
    time.sleep(0.05)
  for p in first:
    p.kill()
    p.wait()
  finish(start_workers(setup, str(tmp_path / "second"), workers))
  result = json.loads((tmp_path / "second0.json").read_text())
  resumed = [n for n in result["notes"] if n.startswith("resumed from step ")]
  assert len(resumed) == 1, result["notes"]
  step = int(resumed[0].split()[3])
  assert 0 < step < steps and resumed[0].startswith(f"resumed from step {step} of {steps} "), \
      resumed
  if workers == 1:
    assert result["accuracy"] >= MIN_ACCURACY, (
        f"{loop}: a resumed training's eval accuracy {result['accuracy']:.3f}, "
        f"expected >= {MIN_ACCURACY} as an uninterrupted one reaches")
  assert not saved.exists(), "the finished training's checkpoints were kept"

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
  transformed_digits,
  write_setup,
)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
  """All 1797 digits through the real preprocessing_fn, split 1400 / 397."""
  return transformed_digits(tmp_path_factory.mktemp("digits"))


# `fit` on one worker is the compiled Trainer's case: tests/e2e/test_kubeflow_steps.py
# kills it at its first checkpoint, and the retry resumes and serves >= 0.95.
@pytest.mark.parametrize("loop,workers", [("custom", 1), ("custom", 2)])
def test_a_killed_training_resumes_from_its_checkpoint(digits, tmp_path, loop, workers):
  """A training killed (SIGKILL, as a preempted pod) after its first
  checkpoint, then started again as a retry is: it resumes, says so, ends
  as accurate as an uninterrupted one, and deletes its checkpoints. `fit`
  resumes in a retried Kubeflow Trainer (test_kubeflow_steps) and, with two
  workers, in a restarted TrainJob (test_train_workers)."""
  steps = 400 if workers == 1 else 60
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

"""fit under MultiWorkerMirroredStrategy across two worker processes on
127.0.0.1: the same weights after reading disjoint shards."""

import dataclasses
import json
import os

import numpy as np

from tests.training import (
  CONFIG,
  finish,
  start_workers,
  write_setup,
)


def test_two_workers_train_the_same_weights_on_different_shards(digits, tmp_path):
  # A step on each worker's own shard would already part weights not reduced
  # across workers; 4 steps in each of 2 epochs (per-epoch validation included).
  setup = write_setup(digits, tmp_path, dataclasses.replace(CONFIG, train_steps=8, epochs=2,
                                                      batch_size=16))
  finish(start_workers(setup, str(tmp_path / "worker"), workers=2))
  workers = [json.loads((tmp_path / f"worker{i}.json").read_text()) for i in range(2)]
  assert [w["replicas"] for w in workers] == [2, 2]
  assert [w["chief"] for w in workers] == [True, False]
  first, second = (set(w["records"]) for w in workers)
  assert first and second and not first & second, "the workers' shards overlap"
  assert len(first | second) == 1400, "the shards together miss records"
  weights = [np.load(str(tmp_path / f"worker{i}.json.npz")) for i in range(2)]
  assert len(weights[0].files) == len(weights[1].files) > 0
  for name in weights[0].files:
    np.testing.assert_allclose(weights[0][name], weights[1][name], atol=1e-6,
                               err_msg=f"weights {name} differ between workers")
  # Only the chief's export is kept.
  assert os.path.exists(os.path.join(tmp_path, "serving", "saved_model.pb"))


# `fit` on one worker is the compiled Trainer's case: tests/e2e/test_kubeflow_steps.py
# kills it at its first checkpoint, and the retry resumes and serves >= 0.95.

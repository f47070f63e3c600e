"""What the training tests share: all 1797 digits through the real
preprocessing_fn, split 1400 / 397 in four shards each, and the worker
processes of tests/multiworker_worker.py (tests/integration/trainer/test_loop.py,
tests/processes/trainer/)."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from dataset import declaration
from dataset.training import TrainingConfig
from tests.conftest import REPO, digit_rows, digits_dataset

CONFIG = TrainingConfig(train_steps=400, epochs=4, eval_steps=4, batch_size=64)
MIN_ACCURACY = 0.9  # the pipeline blesses at 0.9 too; fit reaches ~0.97 here


def transformed_digits(folder) -> dict:
  """The digits, transformed, under `folder`: Transform's outputs and the
  train and eval file patterns."""
  from tests.transform_helpers import analyze_and_transform
  rows = digit_rows(1797)
  decl = declaration.load(digits_dataset(folder, rows, pattern_layout=False))
  out = analyze_and_transform(decl, rows, str(folder), parsed=False)
  records = [r.numpy() for r in tf.data.TFRecordDataset(
      tf.io.gfile.glob(out["files"][0]), "GZIP")]
  files = {}
  for split, part in (("train", records[:1400]), ("eval", records[1400:])):
    os.makedirs(folder / split)
    for shard in range(4):
      path = str(folder / split / f"part-{shard}.gz")
      with tf.io.TFRecordWriter(path, "GZIP") as w:
        for r in part[shard::4]:
          w.write(r)
    files[split] = [str(folder / split / "*.gz")]
  return dict(out, train=files["train"], eval=files["eval"])


@pytest.fixture(scope="package")
def digits(tmp_path_factory):
  """All 1797 digits through the real preprocessing_fn, split 1400 / 397:
  made once per test package that imports this fixture (half a minute)."""
  return transformed_digits(tmp_path_factory.mktemp("digits"))


def write_setup(digits, tmp_path, config: TrainingConfig, **extra) -> str:
  setup = {"declaration": digits["decl"].to_dict(), "training": config.to_dict(),
           "transform_dir": digits["transform_dir"],
           "train_files": digits["train"], "eval_files": digits["eval"],
           "serving_dir": str(tmp_path / "serving"), **extra}
  (tmp_path / "setup.json").write_text(json.dumps(setup))
  return str(tmp_path / "setup.json")


def start_workers(setup: str, out: str, workers: int = 1) -> list:
  """The training processes (tests/multiworker_worker.py): one, or a
  cluster of `workers` on 127.0.0.1."""
  from trainer.jobs.local import free_ports
  hosts = [f"127.0.0.1:{p}" for p in free_ports(workers)]
  procs = []
  for index in range(workers):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if workers > 1:
      env["TF_CONFIG"] = json.dumps(
          {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}})
    procs.append(subprocess.Popen(
        [sys.executable, "-m", "tests.multiworker_worker", setup, f"{out}{index}.json"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
  return procs


def finish(procs) -> None:
  for index, p in enumerate(procs):
    log = p.communicate(timeout=900)[0]
    assert p.returncode == 0, f"worker {index} exited {p.returncode}:\n{log[-3000:]}"

"""Training for real on the digits: fit and the custom loop on one device,
and fit with MultiWorkerMirroredStrategy across two worker processes."""

import dataclasses
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from dataset import declaration
from dataset.training import TrainingConfig
from launcher.local import free_ports
from report.training import read_curves
from tests.conftest import REPO, digit_rows, digits_dataset
from trainer import distribute, input_pipeline, run

CONFIG = TrainingConfig(train_steps=400, epochs=4, eval_steps=4, batch_size=64)
MIN_ACCURACY = 0.9  # the pipeline blesses at 0.9 too; fit reaches ~0.97 here


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
  """All 1797 digits through the real preprocessing_fn, split 1400 / 397."""
  from tests.transform_helpers import analyze_and_transform
  folder = tmp_path_factory.mktemp("digits")
  rows = digit_rows(1797)
  decl = declaration.load(digits_dataset(folder, rows, pattern_layout=False))
  out = analyze_and_transform(decl, rows, str(folder))
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


def _accuracy(model, digits, decl, spec):
  correct = total = 0
  for x, y in input_pipeline.make_dataset(digits["eval"], spec, decl, CONFIG, False):
    correct += int(np.sum(np.argmax(model(x, training=False), axis=1) == y.numpy()))
    total += len(y)
  assert total == 397
  return correct / total


@pytest.mark.parametrize("loop", ["fit", "custom"])
def test_each_training_loop_reaches_the_accuracy_threshold(digits, loop, tmp_path, capsys):
  tf.keras.utils.set_random_seed(0)
  output = tft.TFTransformOutput(digits["transform_dir"])
  decl = digits["decl"]
  config = dataclasses.replace(CONFIG, loop=loop, progress_seconds=0.3)
  model = run.train(digits["train"], digits["eval"], output, decl, config,
                    tf.distribute.get_strategy(), log_dir=str(tmp_path / "logs"))
  # Its progress, in a log (pytest's capture is no terminal): lines written
  # while it trained, each with the step, the loss, the rate, the time left.
  lines = re.findall(r"^  Trainer: step (\d+) of (\d+), loss (\d+\.\d+), (\d+) examples/s, "
                     r"(\S+) left$", capsys.readouterr().out, re.M)
  assert lines and all(total == "400" for _, total, *_ in lines), lines
  assert any(int(step) < 400 for step, *_ in lines), lines
  accuracy = _accuracy(model, digits, decl, output.transformed_feature_spec())
  assert accuracy >= MIN_ACCURACY, (
      f"{loop}: eval accuracy {accuracy:.3f}, expected >= {MIN_ACCURACY}")
  # Both loops leave the same TensorBoard curves, which the run report draws.
  curves = read_curves(str(tmp_path / "logs"))
  assert sorted(curves["loss"]) == ["train"] + (["validation"] if loop == "fit" else [])
  assert sorted(curves["accuracy"]) == ["train", "validation"], curves.keys()
  for split, points in curves["accuracy"].items():
    assert [step for step, _ in points] == list(range(CONFIG.epochs)), (split, points)
  assert curves["accuracy"]["validation"][-1][1] >= MIN_ACCURACY - 0.1, curves["accuracy"]


def _setup(digits, tmp_path, config: TrainingConfig, **extra) -> str:
  setup = {"declaration": digits["decl"].to_dict(), "training": config.to_dict(),
           "transform_dir": digits["transform_dir"],
           "train_files": digits["train"], "eval_files": digits["eval"],
           "serving_dir": str(tmp_path / "serving"), **extra}
  (tmp_path / "setup.json").write_text(json.dumps(setup))
  return str(tmp_path / "setup.json")


def _start(setup: str, out: str, workers: int = 1) -> list:
  """The training processes (tests/multiworker_worker.py): one, or a
  cluster of `workers` on 127.0.0.1."""
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


def _finish(procs) -> None:
  for index, p in enumerate(procs):
    log = p.communicate(timeout=900)[0]
    assert p.returncode == 0, f"worker {index} exited {p.returncode}:\n{log[-3000:]}"


def test_two_workers_train_the_same_weights_on_different_shards(digits, tmp_path):
  setup = _setup(digits, tmp_path, dataclasses.replace(CONFIG, train_steps=40, epochs=2,
                                                      batch_size=16))
  _finish(_start(setup, str(tmp_path / "worker"), workers=2))
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
  setup = _setup(digits, tmp_path, config, checkpoints=str(saved),
                 log_dir=str(tmp_path / "logs"))
  first = _start(setup, str(tmp_path / "first"), workers)
  while tf.train.latest_checkpoint(str(saved / "chief")) is None:
    assert all(p.poll() is None for p in first), "a worker ended before its first checkpoint"
    time.sleep(0.05)
  for p in first:
    p.kill()
    p.wait()
  _finish(_start(setup, str(tmp_path / "second"), workers))
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


@pytest.mark.parametrize("tf_config, tasks", [
    (None, 0), ("", 0),
    (json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}), 1),
    (json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"], "ps": ["d:1"]},
                 "task": {"type": "chief", "index": 0}}), 3)])
def test_only_a_cluster_of_two_or_more_tasks_means_multi_worker(tf_config, tasks):
  assert distribute.cluster_tasks(tf_config) == tasks
  if tasks < 2:
    strategy = distribute.make_strategy(tf_config)
    assert strategy.num_replicas_in_sync == 1  # no GPU here: the default
    assert distribute.is_chief(strategy)


def test_batches_prefetched_to_a_device_are_the_same_batches():
  # The GPU feed, pointed at the CPU: what a GPU run does before its steps.
  ds = tf.data.Dataset.range(10).batch(3)
  fed = distribute.feed_device(ds, "/cpu:0")
  assert [b.numpy().tolist() for b in fed] == [b.numpy().tolist() for b in ds]
  assert distribute.feed_device(ds, None) is ds

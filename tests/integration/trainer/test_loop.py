"""Training for real on the digits: fit and the custom loop on one device
reach the accuracy threshold, their progress lines in a log."""

import dataclasses
import re

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from store.report.training import read_curves
from tests.training import (
  CONFIG,
  MIN_ACCURACY,
)
from trainer import input_pipeline, run


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


# `fit` on one worker is the compiled Trainer's case: tests/e2e/test_kubeflow_steps.py
# kills it at its first checkpoint, and the retry resumes and serves >= 0.95.

"""components/tuner/trial.py: what a trial worker process is handed comes
back whole, and a trial is scored by the objective it searches, each kind
of metric its own way."""

import json

import numpy as np
import pytest
import tensorflow as tf

from components.tuner.trial import TrialData, score
from dataset.training import TrainingConfig


def test_what_a_worker_process_is_handed_comes_back_whole(digits_decl):
  data = TrialData(["/t/train/*.gz"], ["/t/eval/*.gz"], "/t/transform", digits_decl,
                   TrainingConfig(batch_size=32, learning_rate=0.01, train_steps=70), True)
  again = TrialData.from_dict(json.loads(json.dumps(data.to_dict())))
  assert again == data
  assert again.config.batch_size == 32 and again.materialized is True


def _scored(metric: str, predictions, labels) -> float:
  dataset = tf.data.Dataset.from_tensor_slices(
      (np.array(predictions, np.float32), np.array(labels))).batch(2)
  return score(lambda inputs, training: inputs, dataset, metric)


def test_auc_is_scored_on_the_positive_class():
  # Class 1's probability ranks every positive above every negative.
  probabilities = [[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]]
  assert _scored("auc", probabilities, [0, 1, 0, 1]) == pytest.approx(1.0)
  assert _scored("auc", probabilities, [1, 0, 1, 0]) == pytest.approx(0.0)


def test_a_regression_is_scored_by_its_error_over_every_example():
  # Batches of 2: the last one, short, counts as one example, not as a batch.
  values, labels = [[1.0], [2.0], [5.0]], [1.0, 2.0, 3.0]
  assert _scored("rmse", values, labels) == pytest.approx((4 / 3) ** 0.5, rel=1e-5)
  assert _scored("mae", values, labels) == pytest.approx(2 / 3, rel=1e-5)


def test_accuracy_counts_the_most_likely_class():
  assert _scored("accuracy", [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], [0, 1, 1]) == (
      pytest.approx(2 / 3))

"""One trial: train with a trial's values, through the Trainer's own code, and
score the model on the eval split.

The input pipeline, the model and the training loop are `trainer.run.train`'s,
so a trial trains exactly as the Trainer will with the same settings, only
for `tuning.steps` steps, from scratch (no warm start: every trial starts
equal).
"""

import dataclasses
import functools
import time
from typing import Any, Dict, List

import tensorflow as tf
import tensorflow_transform as tft

from dataset import metrics
from dataset.declaration import Declaration
from dataset.training import TrainingConfig
from trainer import distribute, input_pipeline
from trainer import run as trainer_run


@dataclasses.dataclass(frozen=True)
class TrialData:
  """What every trial trains and scores on, and the settings it starts from.

  Attributes:
    train_files, eval_files: TFX split file patterns, as the Trainer gets them.
    transform_output: the Transform graph's folder.
    decl: the declaration.
    config: the Trainer's settings, which a trial's values override.
    materialized: whether the files hold transformed examples.
  """
  train_files: List[str]
  eval_files: List[str]
  transform_output: str
  decl: Declaration
  config: TrainingConfig
  materialized: bool

  def to_dict(self) -> Dict[str, Any]:
    """JSON for a worker process (components/tuner/worker.py)."""
    return {"train_files": list(self.train_files), "eval_files": list(self.eval_files),
            "transform_output": self.transform_output, "decl": self.decl.to_dict(),
            "config": self.config.to_dict(), "materialized": self.materialized}

  @classmethod
  def from_dict(cls, d: Dict[str, Any]) -> "TrialData":
    return cls(d["train_files"], d["eval_files"], d["transform_output"],
               Declaration.from_dict(d["decl"]), TrainingConfig.from_dict(d["config"]),
               d["materialized"])


@functools.lru_cache(maxsize=4)
def _transform_output(path: str) -> tft.TFTransformOutput:
  return tft.TFTransformOutput(path)


def score(model: tf.keras.Model, dataset: tf.data.Dataset, metric_name: str) -> float:
  """`metric_name` (dataset/metrics.py) of `model` over all of `dataset`."""
  metric = metrics.named(metric_name)
  keras_metric = getattr(tf.keras.metrics, metric.class_name)()
  for inputs, label in dataset:
    predictions = model(inputs, training=False)
    if metric.name == "auc":  # the positive class's probability
      predictions = predictions[:, 1]
    elif metric.label_kind == "regression":
      # An example a row: Keras' error metrics average over the last axis
      # first, so a [batch] label against [batch, 1] values would weigh
      # each batch alike, not each example (a short last batch counted whole).
      label = tf.reshape(tf.cast(label, predictions.dtype), [-1, 1])
      predictions = tf.reshape(predictions, [-1, 1])
    keras_metric.update_state(label, predictions)
  return float(keras_metric.result())


def run_trial(data: TrialData, values: Dict[str, Any], steps: int,
              objective: str) -> Dict[str, float]:
  """Trains with `values` over the config for `steps` steps and scores it.

  Returns:
    {objective: the score on the eval split, "seconds": the trial's time,
     "steps": the steps trained}.
  """
  start = time.time()
  config = data.config.with_values(values).with_train_steps(steps)
  tft_output = _transform_output(data.transform_output)
  strategy = distribute.make_strategy(None)
  model = trainer_run.train(data.train_files, data.eval_files, tft_output, data.decl,
                            config, strategy, data.materialized)
  spec, transform = trainer_run.input_spec(tft_output, data.materialized)
  evaluation = input_pipeline.make_dataset(data.eval_files, spec, data.decl, config,
                                           False, transform)
  result = {objective: score(model, evaluation, objective),
            "seconds": time.time() - start, "steps": float(steps)}
  # Each trial builds a new model: without this the process keeps every
  # earlier trial's graph and weights.
  tf.keras.backend.clear_session()
  return result

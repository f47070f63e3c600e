"""The declaration's search as keras-tuner's HyperParameters and oracle.

Only keras-tuner's oracles and HyperParameters are used, never its Keras
tuners: keras-tuner imports Keras 3 (keras-team/keras-tuner#1039), and the
models here are tf-keras (trainer/__init__.py). The oracle proposes values;
components/tuner/trial.py trains with them through the Trainer's own code. So
keras_tuner is imported inside these functions, never by the Trainer.
"""

import json
import math
import os
import tempfile

import tensorflow as tf

from dataset import metrics
from dataset.tuning import Tuning

# Hyperband's budget unit: a trial with `tuner/epochs` e trains
# e / HYPERBAND_EPOCHS of tuning.steps (the longest trials: all of them).
# With factor 3, each bracket's first round trains a third of the steps, and
# its best third goes on to all of them: two rounds, which a search of ten
# or so trials can finish (with 9, a first round alone is 9 trials).
HYPERBAND_EPOCHS = 3


def hyperparameters(tuning: Tuning):
  """The search space as a keras_tuner.HyperParameters."""
  import keras_tuner as kt
  hp = kt.HyperParameters()
  for d in tuning.space:
    low, high = d.values[0], d.values[-1]
    if d.distribution == "choice":
      hp.Choice(d.field, list(d.values))
    elif d.distribution == "int":
      hp.Int(d.field, low, high)
    else:
      hp.Float(d.field, float(low), float(high),
               sampling="log" if d.distribution == "log_uniform" else "linear")
  return hp


def objective(tuning: Tuning):
  import keras_tuner as kt
  metric = metrics.named(tuning.objective)
  return kt.Objective(metric.name, "max" if metric.higher_is_better else "min")


def make_oracle(tuning: Tuning, seed: int = 0, state_dir: str = ""):
  """The chief's oracle for `tuning`, keeping its state in `state_dir`, and
  reloaded from it when an earlier attempt left one there (its unfinished
  trials run again); without one, in a temporary folder."""
  from keras_tuner import oracles
  common = dict(objective=objective(tuning), hyperparameters=hyperparameters(tuning),
                seed=seed, max_consecutive_failed_trials=3)
  if tuning.algorithm == "bayesian":
    oracle = _atomic(oracles.BayesianOptimizationOracle)(max_trials=tuning.max_trials,
                                                         **common)
  elif tuning.algorithm == "random":
    oracle = _atomic(oracles.RandomSearchOracle)(max_trials=tuning.max_trials, **common)
  else:
    # Hyperband has no max_trials of its own; create_trial honours the
    # attribute, so the search stops there too.
    oracle = _atomic(oracles.HyperbandOracle)(max_epochs=HYPERBAND_EPOCHS, factor=3,
                                              **common)
    oracle.max_trials = tuning.max_trials
  oracle.verbose = 0  # components/tuner/search.py prints a line per trial
  oracle._set_project_dir(state_dir or tempfile.mkdtemp(prefix="oracle-"), "search")
  if state_dir and tf.io.gfile.exists(oracle._get_oracle_fname()):
    oracle.reload()
  return oracle


def _atomic(oracle_class):
  """`oracle_class`, writing its state and its trials' whole or not at all.

  keras-tuner writes them in place (utils.save_json): a Tuner killed while
  it writes (a preempted pod, a killed run) leaves an empty oracle.json,
  and the run that resumes the search fails to reload it (measured: a run
  killed as its second trial ended). Each file is written beside its place
  and renamed over it; on an object store the write is one whole object.
  """
  class Atomic(oracle_class):
    def save(self):
      _write_json(self._get_oracle_fname(), self.get_state())

    def _save_trial(self, trial):
      _write_json(os.path.join(self._get_trial_dir(trial.trial_id), "trial.json"),
                  trial.get_state())

    def reload(self):
      super().reload()
      # end_trial writes the trial's file, then the oracle's: a Tuner killed
      # between them left a trial ended in its own file and ongoing in the
      # oracle's, which reload queues to run again. It ran; it stays ended.
      for trial_id in [t for t in self._retry_queue
                       if self.trials[t].status in ("COMPLETED", "FAILED")]:
        self._retry_queue.remove(trial_id)
        if trial_id not in self.end_order:
          self.end_order.append(trial_id)

  Atomic.__name__ = f"Atomic{oracle_class.__name__}"
  return Atomic


def _write_json(path: str, state: dict) -> None:
  with tf.io.gfile.GFile(f"{path}.tmp", "w") as f:
    f.write(json.dumps(state))
  tf.io.gfile.rename(f"{path}.tmp", path, overwrite=True)


def training_values(values: dict) -> dict:
  """A trial's values for TrainingConfig: without Hyperband's `tuner/` keys."""
  return {k: v for k, v in values.items() if not k.startswith("tuner/")}


def trial_steps(tuning: Tuning, values: dict) -> int:
  """Train steps for a trial: tuning.steps, or Hyperband's share of it."""
  epochs = values.get("tuner/epochs")
  if epochs is None:
    return tuning.steps
  return max(1, math.ceil(tuning.steps * epochs / HYPERBAND_EPOCHS))

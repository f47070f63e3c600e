"""Checkpoints a preempted Trainer resumes from: the step, the model and the
optimizer state.

A GPU node preempted after 9 hours of a 10-hour training must not cost 9
hours. Where the checkpoints go is where the next attempt looks:
- on Kubeflow, a retry re-runs the executor with the same output URIs, so
  without a training key they go under the `model_run` output;
- a local rerun is a new execution with new output folders, so with a
  training key (always locally; on Kubeflow with spans) they go under
  `<pipeline root>/checkpoints/<pipeline>/<training key>`: the same data,
  settings and code (pipeline/cache_keys.py), so whatever attempt finds them
  trains the same model.
They are deleted once the model is exported, so a finished training is
never "resumed" by a later run with the same key.

`fit` uses Keras' own BackupAndRestore (which also restores mid-epoch, and
lets every worker of MultiWorkerMirroredStrategy save while only the chief
writes); the custom loop saves a tf.train.Checkpoint in the same layout.
`TrainingConfig.checkpoint_every` says how often: every N optimizer steps,
or 0 (the default) at each epoch's end, 8 checkpoints a training by default.
"""

import logging
import os
import tempfile
from typing import List, Optional

import tensorflow as tf

from trainer import distribute

CHIEF = "chief"  # the folder every worker restores from, as Keras names it
CONFIG_KEY = "checkpoints"  # in the Trainer's custom_config: the root folder


def folder(root: str, training_key: str, model_run_dir: Optional[str]) -> Optional[str]:
  """Where this training's checkpoints go (see the module docstring), or None."""
  if root and training_key:
    return f"{root.rstrip('/')}/{training_key}"
  return os.path.join(model_run_dir, "checkpoints") if model_run_dir else None


def note(step: int, total: int) -> str:
  """The run's line for a resumed training."""
  return f"resumed from step {step} of {total} (a checkpoint of an interrupted attempt)"


class _Resumed(tf.keras.callbacks.Callback):
  """After BackupAndRestore restored (it runs first), records the step."""

  def __init__(self, steps_per_epoch: int, initial_epoch: int, found: List[int]):
    super().__init__()
    self.steps_per_epoch, self.initial_epoch, self.found = (
        steps_per_epoch, initial_epoch, found)

  def on_train_begin(self, logs=None):
    epoch, step = self.model._training_state.maybe_load_initial_counters_from_ckpt(
        self.steps_per_epoch, self.initial_epoch, "train")
    resumed = epoch * self.steps_per_epoch + step
    if resumed > self.initial_epoch * self.steps_per_epoch:
      self.found.append(resumed)


def fit_callbacks(where: Optional[str], every: int, steps_per_epoch: int,
                  initial_epoch: int, found: List[int]) -> list:
  """BackupAndRestore into `where` (none without), and the note's callback."""
  if not where:
    return []
  return [tf.keras.callbacks.BackupAndRestore(where, save_freq=every or "epoch",
                                              delete_checkpoint=False),
          _Resumed(steps_per_epoch, initial_epoch, found)]


def has_checkpoint(where: Optional[str]) -> bool:
  return bool(where) and tf.train.latest_checkpoint(os.path.join(where, CHIEF)) is not None


class LoopCheckpoint:
  """The custom loop's checkpoint: the model (with its optimizer) and the step."""

  def __init__(self, model: tf.keras.Model, strategy: tf.distribute.Strategy, where: str):
    self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
    self.restored = 0
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=self.step)
    self.read = tf.train.CheckpointManager(checkpoint, os.path.join(where, CHIEF),
                                           max_to_keep=2)
    # Every worker saves (a distributed variable is read collectively); only
    # the chief's copy is kept, as Keras does for `fit`.
    self.temporary = None if distribute.is_chief(strategy) else tempfile.mkdtemp("ckpt")
    self.write = self.read if self.temporary is None else tf.train.CheckpointManager(
        checkpoint, self.temporary, max_to_keep=1)

  def restore(self) -> int:
    """The steps already taken: 0 without a checkpoint."""
    self.read.restore_or_initialize()
    self.restored = int(self.step.numpy())
    return self.restored

  def save(self, step: int) -> None:
    self.step.assign(step)
    self.write.save()
    if self.temporary:
      tf.io.gfile.rmtree(self.temporary)


def discard(where: Optional[str], strategy: tf.distribute.Strategy) -> None:
  """Deletes the checkpoints of a training whose model is exported."""
  if not (where and distribute.is_chief(strategy)):
    return
  try:  # not `exists` first: on an object store a folder is no object
    tf.io.gfile.rmtree(where)
  except tf.errors.NotFoundError:
    return
  logging.getLogger("absl").info("checkpoints of the finished training deleted: %s", where)

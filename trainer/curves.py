"""Training curves: per-epoch numbers in TensorBoard's format, and a log line.

Both loops write the same files, the way Keras' TensorBoard callback lays
them out (`<log_dir>/train` and `<log_dir>/validation`, scalars named
`epoch_<metric>`), so TensorBoard and the run report (store/report/) read
either. The Trainer passes TFX's `model_run` folder as `log_dir`.
"""

import logging
import os
from typing import Dict, Optional

import tensorflow as tf

keras = tf.keras


class _LogEpoch(keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    log_epoch(epoch, logs or {}, int(self.model.optimizer.iterations.numpy()))


def callbacks(log_dir: Optional[str]) -> list:
  """Keras callbacks for `fit`: TensorBoard files (if log_dir) and a log line."""
  logged = [_LogEpoch()]
  if log_dir:
    logged.append(keras.callbacks.TensorBoard(log_dir=log_dir, write_graph=False,
                                              profile_batch=0))
  return logged


def write_epoch(log_dir: Optional[str], epoch: int, numbers: Dict[str, float],
                step: int) -> None:
  """Writes one epoch's numbers (`loss`, `val_accuracy`, ...) for TensorBoard."""
  log_epoch(epoch, numbers, step)
  if not log_dir:
    return
  splits = {"train": {}, "validation": {}}
  for key, value in numbers.items():
    if key.startswith("val_"):
      splits["validation"][key[len("val_"):]] = value
    else:
      splits["train"][key] = value
  for split, values in splits.items():
    writer = tf.summary.create_file_writer(os.path.join(log_dir, split))
    with writer.as_default():
      for name, value in values.items():
        tf.summary.scalar(f"epoch_{name}", value, step=epoch)
    writer.close()


def log_epoch(epoch: int, numbers: Dict[str, float], step: int) -> None:
  """One line per epoch, with the training steps taken so far."""
  # Through logging, not print: quiet runs show it with -v only.
  logging.getLogger("absl").info(
      "epoch %d (step %d): %s", epoch + 1, step,
      " ".join(f"{k} {float(v):.4f}" for k, v in sorted(numbers.items())))

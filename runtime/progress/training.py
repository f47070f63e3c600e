"""The Trainer's progress line: its step of the total, the loss, examples
per second and the time left.

On a terminal the line updates in place; in a log (Kubeflow's step log, CI)
it is a new line every `progress_seconds` (dataset/training.py), so a
Trainer that runs for hours says where it is, and one that runs for
seconds says nothing (runtime/progress/console.py). Only the chief reports.
"""

import time
from typing import Optional

import tensorflow as tf

from runtime.progress import console

keras = tf.keras


class Steps:
  """Counts steps and writes the line; `fit`'s callback and the custom loop
  both feed it."""

  def __init__(self, total: int, global_batch: int, every: float, out=None):
    self.total, self.global_batch = total, global_batch
    self._live = console.Live(every, out)
    # The rate counts from the first step reported: a resumed Trainer's
    # earlier steps were not taken here.
    self._start_step, self._started = None, time.monotonic()

  def line(self, step: int, loss: Optional[float]) -> str:
    seconds = time.monotonic() - self._started
    rate = (step - self._start_step) / seconds if seconds > 0 else 0.0
    left = (self.total - step) / rate if rate > 0 else None
    return (f"  Trainer: step {step} of {self.total}"
            + (f", loss {loss:.4f}" if loss is not None else "")
            + f", {rate * self.global_batch:.0f} examples/s, "
            + (f"{console.clock(left)} left" if left is not None else "time left unknown"))

  def step(self, step: int, loss: Optional[float]) -> None:
    if self._start_step is None:
      self._start_step, self._started = step - 1, time.monotonic()
    self._live.update(self.line(step, loss))

  def done(self) -> None:
    self._live.done()


class FitProgress(keras.callbacks.Callback):
  """`fit`'s callback: the step counts the epochs before this phase."""

  def __init__(self, steps: Steps, steps_per_epoch: int):
    super().__init__()
    self._steps, self._per_epoch, self._epoch = steps, steps_per_epoch, 0

  def on_epoch_begin(self, epoch, logs=None):
    self._epoch = epoch

  def on_train_batch_end(self, batch, logs=None):
    loss = (logs or {}).get("loss")
    self._steps.step(self._epoch * self._per_epoch + batch + 1,
                     None if loss is None else float(loss))

  def on_train_end(self, logs=None):
    self._steps.done()

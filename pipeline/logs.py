"""How much a local run prints, decided here and nowhere else.

Quiet (the default): one line per component as it finishes, then the
outcome. The start-up noise is switched off where it comes from:

- TensorFlow's C++ logs (CUDA stubs, CPU features, TensorRT, rendezvous):
  `TF_CPP_MIN_LOG_LEVEL`, read once when TensorFlow loads, so `configure`
  must run before anything imports it;
- Python warnings (google.api_core's Python-version FutureWarning, TF and
  Beam deprecations): warning filters, also passed to subprocesses through
  `PYTHONWARNINGS` (Beam workers, multi-worker training);
- the Python loggers of absl (TFX logs through it), TensorFlow, Beam and the
  Google client libraries: ERROR and above only.

Errors still print, and a failing component's traceback is printed in full
by the runner. `-v` leaves every library's logging at INFO.

The per-component lines come from TFX's own progress records: LocalDagRunner
logs "Component %s is running." / "... is finished." through absl around each
node. `Progress` listens for those records on the absl logger (which stays
at INFO so they exist; only its output is raised to ERROR), and asks ML
Metadata for the state, between two components, when nothing else writes.
"""

import logging
import os
import sys
import time
import warnings
from typing import Callable, Optional, TextIO

from absl import logging as absl_logging

NOISY_LOGGERS = ("absl", "tensorflow", "apache_beam", "tfx", "ml_metadata",
                 "google", "googleapiclient", "urllib3", "kfp", "h5py")
_QUIET_WARNINGS = "ignore::FutureWarning,ignore::DeprecationWarning,ignore::UserWarning"


def configure(verbose: bool) -> None:
  """Sets every library's verbosity for this process and its children."""
  if verbose:
    logging.basicConfig(level=logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    for name in NOISY_LOGGERS:
      logging.getLogger(name).setLevel(logging.INFO)
    absl_logging.set_verbosity(absl_logging.INFO)
    return
  os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
  os.environ["PYTHONWARNINGS"] = _QUIET_WARNINGS
  for category in (FutureWarning, DeprecationWarning, UserWarning):
    warnings.filterwarnings("ignore", category=category)
  # A root handler at ERROR, made first, so that a library's later
  # basicConfig() call is a no-op rather than a second, chattier handler.
  logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
  for handler in logging.getLogger().handlers:
    handler.setLevel(logging.ERROR)
  for name in NOISY_LOGGERS:
    logging.getLogger(name).setLevel(logging.ERROR)
  # absl stays at INFO for `Progress`; the root handler above drops the rest.
  # Through absl's own flag: TF saves and restores absl's verbosity around
  # SavedModel exports, and would otherwise reset a plain setLevel.
  absl_logging.set_verbosity(absl_logging.INFO)


StateFn = Callable[[str], str]


class Progress(logging.Handler):
  """Prints `<component>  <state>  <seconds>` as each component finishes.

  Attach with `with Progress(state_of): runner.run(...)`. `state_of(node)`
  returns the state of the node's latest execution (COMPLETE, CACHED, ...).
  When a component raises, its line says FAILED before the error propagates.
  """

  def __init__(self, state_of: StateFn, out: TextIO = sys.stdout):
    super().__init__(level=logging.INFO)
    self._state_of = state_of
    self._out = out
    self._running: Optional[str] = None
    self._started = 0.0

  def emit(self, record: logging.LogRecord) -> None:
    if record.msg == "Component %s is running.":
      self._running, self._started = record.args[0], time.monotonic()
    elif record.msg == "Component %s is finished." and self._running:
      self._finish(self._state_of(self._running))
    elif record.msg == "Skipping component %s.":
      # Outside a partial run's range: reused from the run before, or not run.
      self._print(record.args[0], "skipped", "")

  def _finish(self, state: str) -> None:
    self._print(self._running, state, f"{time.monotonic() - self._started:7.1f}s")
    self._running = None

  def _print(self, node: str, state: str, took: str) -> None:
    print(f"  {node:<18} {state:<9}{took}", file=self._out, flush=True)

  def __enter__(self) -> "Progress":
    logging.getLogger("absl").addHandler(self)
    return self

  def __exit__(self, exc_type, exc, tb) -> None:
    logging.getLogger("absl").removeHandler(self)
    if exc_type is not None and self._running:
      self._finish("FAILED")

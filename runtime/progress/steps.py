"""A local run's progress: one line per component as it finishes.

How much else prints is set when the process starts (runtime/startup.py `start`):
quiet by default, every library's INFO with `-v`. Errors still print, and a
failing component's traceback is printed in full by the runner.

While a component runs, its clock shows too (`console.Clock`): on a terminal in
place, in a log a line a minute, unless the component writes progress of
its own (the Trainer's steps, the Tuner's trials: runtime/progress/console.py).

The per-component lines come from TFX's own progress records: LocalDagRunner
logs "Component %s is running." / "... is finished." through absl around each
node. `Progress` listens for those records on the absl logger (which stays
at INFO so they exist; only its output is raised to ERROR), and asks ML
Metadata for the state, between two components, when nothing else writes.
"""

import logging
import sys
from typing import Callable, Optional, TextIO

from runtime.progress import console

StateFn = Callable[[str], str]


class Progress(logging.Handler):
  """Prints `<component>  <state>  <seconds>` as each component finishes.

  Attach with `with Progress(state_of): runner.run(...)`. `state_of(node)`
  returns the state of the node's latest execution (COMPLETE, CACHED, ...).
  When a component raises, its line says FAILED before the error propagates.
  """

  def __init__(self, state_of: StateFn, out: TextIO = sys.stdout, every: float = 60.0,
               ticking: bool = True):
    """`ticking`: each component's clock ticks in its own thread; else by `tick`."""
    super().__init__(level=logging.INFO)
    self._state_of = state_of
    self._out = out
    self._every, self._ticking = every, ticking
    self._running: Optional[str] = None
    self._started = 0.0
    self._clock: Optional[console.Clock] = None

  def emit(self, record: logging.LogRecord) -> None:
    if record.msg == "Component %s is running.":
      self._running, self._started = record.args[0], console.now()
      self._clock = console.Clock(self._running, self._started, self._out, self._every,
                                  self._ticking)
    elif record.msg == "Component %s is finished." and self._running:
      self._finish(self._state_of(self._running))
    elif record.msg == "Skipping component %s.":
      # Outside a partial run's range: reused from the run before, or not run.
      self._print(record.args[0], "skipped", "")

  def _finish(self, state: str) -> None:
    if self._clock:
      self._clock.stop()
      self._clock = None
    self._print(self._running, state, f"{console.now() - self._started:7.1f}s")
    self._running = None

  def tick(self) -> None:
    """A second of the running component's clock (its thread's, unless `ticking`
    is off)."""
    if self._clock:
      self._clock.tick()

  def _print(self, node: str, state: str, took: str) -> None:
    console.say(f"  {node:<18} {state:<9}{took}", self._out)

  def __enter__(self) -> "Progress":
    logging.getLogger("absl").addHandler(self)
    return self

  def __exit__(self, exc_type, exc, tb) -> None:
    logging.getLogger("absl").removeHandler(self)
    if exc_type is not None and self._running:
      self._finish("FAILED")


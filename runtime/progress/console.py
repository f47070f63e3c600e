"""Progress where the user looks: one line rewritten in place on a terminal,
a line every `every` seconds in a log (Kubeflow's step logs, CI, a file).

Long work (the Trainer's steps, the Tuner's trials, a component that runs
for minutes) reports through a `Live`; several may share the process (the
local runner's per-component clock beside the Trainer's own line), so the
line on a terminal and the time of the last line written are this module's,
behind one lock. Nothing here runs when imported.
"""

import sys
import threading
import time
from typing import Callable, Optional, TextIO

_lock = threading.RLock()
_state = {"shown": "", "out": None, "last": 0.0}  # the terminal's live line; last write
# The clock every line here is timed by (tests set one they move by hand).
now: Callable[[], float] = time.monotonic


def _tty(out: TextIO) -> bool:
  return bool(getattr(out, "isatty", lambda: False)())


def clear() -> None:
  """Erases the live line on the terminal, if one is shown."""
  with _lock:
    out = _state["out"]
    if _state["shown"] and out is not None:
      out.write("\r\x1b[K")
      out.flush()
    _state["shown"] = ""


def say(text: str, out: Optional[TextIO] = None) -> None:
  """Prints a line that stays, above the live line (which is redrawn by
  its next update)."""
  out = out or sys.stdout
  with _lock:
    clear()
    print(text, file=out, flush=True)
    _state["last"] = now()


def quiet_for() -> float:
  """Seconds since any progress line was last written."""
  with _lock:
    return now() - _state["last"] if _state["last"] else float("inf")


class Live:
  """One piece of work's progress line.

  `update(text)` shows `text`: on a terminal in place, at most twice a
  second; in a log as a new line, at most every `every` seconds (the first
  after `every` seconds of work: short work writes nothing). `done()`
  clears a terminal's line.
  """

  def __init__(self, every: float = 60.0, out: Optional[TextIO] = None,
               clock: Optional[Callable[[], float]] = None, background: bool = False):
    """`background`: a fallback line (a component's clock) that steps aside
    for others: its writes do not count for `quiet_for`. `clock`: `now`."""
    self._out = out or sys.stdout
    self._every, self._clock, self._background = every, clock or now, background
    self._tty = _tty(self._out)
    self._written = self._clock()

  @property
  def on_terminal(self) -> bool:
    return self._tty

  def update(self, text: str) -> bool:
    """Shows `text` if its time has come; True if it was written."""
    at = self._clock()
    if at - self._written < (0.5 if self._tty else self._every):
      return False
    with _lock:
      if self._tty:
        self._out.write("\r\x1b[K" + text)
        self._out.flush()
        _state["shown"], _state["out"] = text, self._out
      else:
        print(text, file=self._out, flush=True)
      self._written = at
      if not self._background:
        _state["last"] = now()
    return True

  def done(self) -> None:
    if self._tty:
      clear()


class Clock(threading.Thread):
  """A running component's elapsed time, while nothing else reports: the
  local runner's, around each component, and a Kubeflow step's."""

  def __init__(self, node: str, started: float, out: Optional[TextIO] = None,
               every: float = 60.0, ticking: bool = True):
    """`ticking`: its thread ticks each second; else the caller calls `tick`."""
    super().__init__(daemon=True, name=f"clock-{node}")
    self._node, self._since = node, started
    self._live = Live(every, out, background=True)
    # Another line reported this recently: the clock keeps quiet.
    self._quiet = 5.0 if self._live.on_terminal else every
    self._stopped = threading.Event()
    if ticking:
      self.start()

  def run(self) -> None:
    while not self._stopped.wait(1.0):
      self.tick()

  def tick(self) -> None:
    """Shows the elapsed time, unless another line reported recently."""
    if quiet_for() >= self._quiet:
      self._live.update(f"  {self._node:<18} running  {clock(now() - self._since)}")

  def stop(self) -> None:
    self._stopped.set()
    if self.ident is not None:
      self.join()
    self._live.done()


def clock(seconds: float) -> str:
  """1h02m03s, 2m03s or 3s."""
  seconds = int(round(seconds))
  hours, rest = divmod(seconds, 3600)
  minutes, secs = divmod(rest, 60)
  if hours:
    return f"{hours}h{minutes:02d}m{secs:02d}s"
  return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"

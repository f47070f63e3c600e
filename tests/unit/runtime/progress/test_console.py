"""Progress lines (runtime/progress/console.py) and the local runner's per-component
lines with their clock (runtime/progress/steps.py), in a log and on a terminal,
timed by a clock the tests move by hand (each component clock's thread, a tick a
second, is replaced by calling its tick)."""

import io
import logging

import pytest

from runtime.progress import console
from runtime.progress import steps as progress


class Terminal(io.StringIO):
  def isatty(self):
    return True


class Clock:
  """console.now, moved by hand."""

  def __init__(self):
    self.seconds = 1000.0

  def __call__(self) -> float:
    return self.seconds

  def advance(self, seconds: float) -> None:
    self.seconds += seconds


@pytest.fixture
def clock(monkeypatch):
  fake = Clock()
  monkeypatch.setattr(console, "now", fake)
  monkeypatch.setitem(console._state, "last", 0.0)  # no line written yet
  absl = logging.getLogger("absl")
  level = absl.level
  absl.setLevel(logging.INFO)  # TFX's progress records are INFO (setLevel: the cache too)
  yield fake
  absl.setLevel(level)


def _run(steps: progress.Progress, clock: Clock, node: str, seconds: float) -> None:
  """`node` runs for `seconds`, its clock ticking each whole second."""
  absl = logging.getLogger("absl")
  absl.info("Component %s is running.", node)
  for _ in range(int(seconds)):
    clock.advance(1.0)
    steps.tick()
  clock.advance(seconds - int(seconds))
  absl.info("Component %s is finished.", node)


def test_in_a_log_a_long_component_shows_its_clock_and_a_short_one_does_not(clock):
  out = io.StringIO()
  with progress.Progress(lambda node: "COMPLETE", out, every=1.0, ticking=False) as steps:
    _run(steps, clock, "StatisticsGen", 0.2)
    _run(steps, clock, "Transform", 3.5)
    _run(steps, clock, "Trainer", 61.3)
  lines = out.getvalue().splitlines()
  assert lines[:5] == ["  StatisticsGen      COMPLETE     0.2s",
                       "  Transform          running  1s",
                       "  Transform          running  2s",
                       "  Transform          running  3s",
                       "  Transform          COMPLETE     3.5s"], lines
  assert lines[-3:] == ["  Trainer            running  1m00s",
                        "  Trainer            running  1m01s",
                        "  Trainer            COMPLETE    61.3s"], lines


def test_the_clock_steps_aside_while_other_work_reports_progress(clock):
  out = io.StringIO()
  absl = logging.getLogger("absl")
  with progress.Progress(lambda node: "COMPLETE", out, every=1.0, ticking=False) as steps:
    absl.info("Component %s is running.", "Trainer")
    trainer = console.Live(every=0.25, out=out)
    for tick in range(1, 25):  # three seconds, the Trainer's line every 0.25 s
      clock.advance(0.125)
      trainer.update("  Trainer: step 1 of 9")
      if tick % 8 == 0:
        steps.tick()
    absl.info("Component %s is finished.", "Trainer")
    absl.info("Component %s is running.", "Evaluator")  # which says nothing of its own
    for _ in range(2):
      clock.advance(1.0)
      steps.tick()
    absl.info("Component %s is finished.", "Evaluator")
  lines = out.getvalue().splitlines()
  assert lines.count("  Trainer: step 1 of 9") == 12, lines
  assert lines[-4:] == ["  Trainer            COMPLETE     3.0s",
                        "  Evaluator          running  1s",
                        "  Evaluator          running  2s",
                        "  Evaluator          COMPLETE     2.0s"], lines
  assert not any("Trainer" in line and "running" in line for line in lines), lines


def test_on_a_terminal_the_line_is_rewritten_in_place_and_cleared(clock):
  out = Terminal()
  live = console.Live(every=60.0, out=out)
  clock.advance(0.4)
  assert not live.update("  Trainer: step 4 of 9")  # at most twice a second
  clock.advance(0.2)
  assert live.update("  Trainer: step 5 of 9")
  clock.advance(0.3)
  assert not live.update("  Trainer: step 6 of 9")
  console.say("  Trainer  COMPLETE   1.0s", out)
  assert out.getvalue() == ("\r\x1b[K  Trainer: step 5 of 9" "\r\x1b[K"
                            "  Trainer  COMPLETE   1.0s\n"), repr(out.getvalue())
  assert console.quiet_for() == 0.0
  clock.advance(2.5)
  assert console.quiet_for() == 2.5


def test_clock_reads_as_hours_minutes_and_seconds():
  assert [console.clock(s) for s in (7, 7.4, 63, 62.6, 3723, 3599.7)] == [
      "7s", "7s", "1m03s", "1m03s", "1h02m03s", "1h00m00s"]

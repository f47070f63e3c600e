"""Progress lines (runtime/progress/console.py) and the local runner's per-component
lines with their clock (runtime/progress/steps.py), in a log and on a terminal."""

import io
import logging
import time

from runtime.progress import console
from runtime.progress import steps as progress


class Terminal(io.StringIO):
  def isatty(self):
    return True


def test_in_a_log_a_long_component_shows_its_clock_and_a_short_one_does_not():
  out = io.StringIO()
  with progress.Progress(lambda node: "COMPLETE", out, every=1.0):
    absl = logging.getLogger("absl")
    absl.setLevel(logging.INFO)
    _run(absl, "StatisticsGen", 0.2)
    _run(absl, "Transform", 3.5)
  lines = out.getvalue().splitlines()
  assert lines[0].split() == ["StatisticsGen", "COMPLETE", lines[0].split()[-1]], lines
  running = [line for line in lines if "running" in line]
  # Lines a second apart while Transform ran (the first after one second):
  # its name and its elapsed time; none for the short StatisticsGen.
  assert len(running) >= 2 and all(line.split()[:2] == ["Transform", "running"]
                                   for line in running), lines
  assert running[0].split()[2] in ("1s", "2s"), running
  assert lines[-1].split()[:2] == ["Transform", "COMPLETE"], lines


def _run(absl, node: str, seconds: float) -> None:
  absl.info("Component %s is running.", node)
  time.sleep(seconds)
  absl.info("Component %s is finished.", node)


def test_the_clock_steps_aside_while_other_work_reports_progress():
  out = io.StringIO()
  absl = logging.getLogger("absl")
  absl.setLevel(logging.INFO)
  with progress.Progress(lambda node: "COMPLETE", out, every=1.0):
    absl.info("Component %s is running.", "Trainer")
    trainer = console.Live(every=0.3, out=out)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
      trainer.update("  Trainer: step 1 of 9")
      time.sleep(0.05)
    absl.info("Component %s is finished.", "Trainer")
  text = out.getvalue()
  assert "Trainer: step 1 of 9" in text and "running" not in text, text


def test_on_a_terminal_the_line_is_rewritten_in_place_and_cleared():
  out = Terminal()
  live = console.Live(every=60.0, out=out)
  time.sleep(0.6)
  assert live.update("  Trainer: step 5 of 9")
  assert not live.update("  Trainer: step 6 of 9")  # at most twice a second
  console.say("  Trainer  COMPLETE   1.0s", out)
  assert out.getvalue() == ("\r\x1b[K  Trainer: step 5 of 9" "\r\x1b[K"
                            "  Trainer  COMPLETE   1.0s\n"), repr(out.getvalue())


def test_clock_reads_as_hours_minutes_and_seconds():
  assert [console.clock(s) for s in (7, 63, 3723)] == ["7s", "1m03s", "1h02m03s"]

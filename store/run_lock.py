"""One local run of a pipeline at a time, per output folder.

Two LocalDagRunner runs on one ML Metadata store interleave their
executions: each reads "the latest execution" of a node to say what it did,
so one misreports the other's (a node still `RUNNING` after it finished),
both name the same report, and both judge against the served model they
saw when they started. So a second run of the same pipeline in the same
folder refuses at once, in one line naming the first, before it resolves,
writes or runs anything. Refusing rather than waiting suits the scheduled
runs this guards against: a cron run that finds a manual run in progress
ends, and the next tick starts from the state the first run left.

The lock is an advisory `flock` on `<home>/run.lock`, held by the open file
until the process ends, so a killed run never leaves a stale lock. Runs in
different folders that share one serving dir are guarded at the push
instead (components/pusher/pusher.py).
"""

import datetime
import fcntl
import os

LOCK_FILE = "run.lock"
_held = []  # (the open lock file, the folders made for it) of this process


class RunInProgress(RuntimeError):
  """Another run of the pipeline holds the folder; says which, in one line."""


def hold(home: str, pipeline_name: str, command: str) -> None:
  """Takes the run lock of `home` for the rest of this process.

  Raises:
    RunInProgress: another process holds it (its pid, start time and command).
  """
  made, parent = [], os.path.abspath(home)
  while not os.path.isdir(parent):
    made.append(parent)
    parent = os.path.dirname(parent)
  os.makedirs(home, exist_ok=True)
  path = os.path.join(home, LOCK_FILE)
  f = open(path, "a+")  # held open until the process ends
  try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError:
    f.seek(0)
    holder = f.read().strip() or "a process that has not said which yet"
    f.close()
    raise RunInProgress(f"another run of pipeline {pipeline_name!r} is in progress in "
                        f"{home} ({holder}); this run did nothing. Wait for it to end, "
                        f"or use another --output-dir") from None
  f.seek(0)
  f.truncate()
  started = datetime.datetime.now().isoformat(timespec="seconds")
  f.write(f"pid {os.getpid()}, started {started}: {command}")
  f.flush()
  _held.append((f, made))


def release() -> None:
  """Gives up this process's run locks before it ran anything (a bad
  declaration or data): the lock file goes, and the folders made for it,
  so that nothing is left written."""
  while _held:
    f, made = _held.pop()
    os.unlink(f.name)
    f.close()
    for folder in made:
      try:
        os.rmdir(folder)
      except OSError:  # something else was written there meanwhile
        break

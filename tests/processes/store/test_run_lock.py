"""store/run_lock.py: one local run of a pipeline per output folder."""

import os
import subprocess
import sys

from store import run_lock
from tests.conftest import REPO

SECOND = ("import sys\nfrom store import run_lock\n"
          "try:\n  run_lock.hold(sys.argv[1], 'digits', 'local_runner.py --second')\n"
          "except run_lock.RunInProgress as e:\n  print(e); sys.exit(3)\n")


def _second_run(home: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", SECOND, home], cwd=REPO,
                        capture_output=True, text=True, timeout=120)


def test_a_second_run_in_the_folder_refuses_in_one_line_naming_the_first(tmp_path):
  home = str(tmp_path / "out" / "digits")
  run_lock.hold(home, "digits", "local_runner.py --first")
  try:
    second = _second_run(home)
    assert second.returncode == 3, second.stdout + second.stderr
    (line,) = second.stdout.strip().splitlines()
    assert line.startswith(f"another run of pipeline 'digits' is in progress in {home} "
                           f"(pid {os.getpid()}, started "), line
    assert "local_runner.py --first); this run did nothing" in line, line
  finally:
    run_lock.release()
  # Released before anything ran: the lock file and the folders made for it go.
  assert not os.path.exists(tmp_path / "out"), os.listdir(tmp_path)
  assert _second_run(home).returncode == 0

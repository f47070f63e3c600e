"""The code passes the linter configured in pyproject.toml."""

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_finds_nothing():
  proc = subprocess.run([sys.executable, "-m", "ruff", "check", REPO],
                        capture_output=True, text=True)
  assert proc.returncode == 0, proc.stdout + proc.stderr

"""The two tiers (tests/conftest.py, DEVELOPERS.md "Two tiers"): `pytest`
alone leaves the files marked `long` out and says so; `-m long` and a named
file run them. Collected only, in a pytest process of its own, over
tests/e2e (the folder that holds both kinds)."""

import subprocess
import sys

from tests.conftest import LONG_NOTE, REPO

LONG_FILE = "tests/e2e/test_tuning.py"  # marked long
SUITE_FILE = "tests/e2e/test_bad_input.py"  # in the suite


def collect(*args) -> str:
  done = subprocess.run(
      [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
       "-p", "no:cacheprovider", "-o", "testpaths=tests/e2e", *args],
      cwd=REPO, capture_output=True, text=True, timeout=600)
  assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
  return done.stdout


def test_pytest_alone_leaves_the_long_files_out_and_says_how_to_run_them():
  out = collect()
  assert SUITE_FILE in out and LONG_FILE not in out, out[-2000:]
  assert LONG_NOTE in out, out[-2000:]


def test_minus_m_long_and_a_named_file_run_the_long_ones():
  out = collect("-m", "long")
  assert LONG_FILE in out and SUITE_FILE not in out, out[-2000:]
  named = collect(LONG_FILE)
  assert LONG_FILE in named and LONG_NOTE not in named, named[-2000:]

"""`python -m commands.kubeflow compile` from the command line: quiet, and
its files written."""

import sys

from tests.conftest import (
  REPO,
)


def test_compile_from_the_command_line_starts_quietly(tmp_path):
  """`python -m commands.kubeflow` uses the local runner's log settings: no start-up
  noise from TensorFlow, absl or Google's clients on stderr."""
  import subprocess
  proc = subprocess.run(
      [sys.executable, "-m", "commands.kubeflow", "compile", "--image", "example/img:1",
       "--pipeline-root", "gs://bucket/root", "--output-dir", str(tmp_path / "out"),
       "--data-root", "gs://bucket/data", "--skip-data-check"], cwd=REPO, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr[-3000:]
  # Only the command's own line about the skipped check.
  assert [line for line in proc.stderr.splitlines()
          if not line.startswith("skipped: the check of the declaration")] == [], \
      proc.stderr[-3000:]
  assert (tmp_path / "out" / "pipeline_job.json").is_file()

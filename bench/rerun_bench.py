"""Benchmark: a scheduled run with nothing new, against a full run.

    .venv/bin/python -m bench.rerun_bench [--out DIR]

Runs the Quick start's command twice in a fresh output folder, each as a
user starts it (a fresh process, start-up included): the first run does
everything, the second finds every component in the cache ("no new data").
A recurring run with no new span is the second kind, so what it costs is
what a schedule pays most nights. Prints both times and their ratio against
the goal (at most 0.20 of the full run).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL = 0.20


def _run(runs: str, data: str) -> float:
  start = time.perf_counter()
  done = subprocess.run(
      [sys.executable, "local_runner.py", "--output-dir", runs, "--data-root", data],
      cwd=REPO, capture_output=True, text=True)
  if done.returncode != 0:
    raise SystemExit(f"local_runner.py exited {done.returncode}:\n{done.stderr[-3000:]}")
  return time.perf_counter() - start


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--out", help="where the runs go (default: a temporary folder, "
                                    "removed afterwards)")
  return parser


def main(argv=None) -> None:
  args = build_parser().parse_args(argv)
  out = args.out or tempfile.mkdtemp(prefix="rerun_bench-")
  try:
    # A warm-up run in another folder writes the bundled digits and pays the
    # first imports' disk reads, which neither timed run should.
    data = os.path.join(out, "data")
    _run(os.path.join(out, "warm-up"), data)
    full = _run(os.path.join(out, "timed"), data)
    cached = _run(os.path.join(out, "timed"), data)
  finally:
    if not args.out:
      shutil.rmtree(out, ignore_errors=True)
  ratio = cached / full
  print(f"full run {full:.1f} s, cached re-run {cached:.1f} s: ratio {ratio:.2f}\n"
        f"{'met' if ratio <= GOAL else 'NOT met'}: a cached re-run at most {GOAL:.2f} "
        f"of a full run")


if __name__ == "__main__":
  main()

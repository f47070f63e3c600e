"""Benchmark: how long a user waits for a declaration's error.

    .venv/bin/python -m bench.declaration_bench [--repeats 3]

Three mistakes a newcomer makes in a converted table's declaration: a
misspelt key (`num_clases`), a feature name no serving signature can take
(`od280/od315`), and a label the records do not hold. Each is run as a user
runs it, `local_runner.py --dataset BAD.yaml` in a fresh process, two ways,
interleaved, and the medians printed with their ratio:
- **project**: as it runs now: the declaration and the first records are
  checked before TensorFlow, TFX and Beam load (dataset/check.py
  `check_local`, without TensorFlow);
- **baseline**: the same call after the imports the run made before its
  check until then (the run's preparation, TFX's metadata).
The goal is under two seconds for every error (issue 66).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEFORE = "import commands.run.preparation, tfx.orchestration.metadata\n"
TABLE = "alcohol,od280/od315,target\n" + "".join(
    f"{i / 7},{i % 5},{i % 3}\n" for i in range(60))
MISTAKES = {"misspelt key": ("num_classes:", "num_clases:"),
            "feature name": ("od280_od315:", "od280/od315:"),
            "label not in the records": ("name: target", "name: quality")}


def _declarations(folder: str) -> dict:
  """mistake -> the path of a declaration that makes it, beside real records."""
  with open(os.path.join(folder, "wine.csv"), "w") as f:
    f.write(TABLE)
  out = os.path.join(folder, "wine")
  subprocess.run([sys.executable, "-m", "commands.tfrecords", "convert", "table",
                  os.path.join(folder, "wine.csv"), "--label", "target", "--output", out],
                 cwd=REPO, check=True, capture_output=True)
  with open(os.path.join(out, "dataset.yaml")) as f:
    good = f.read()
  paths = {}
  for i, (mistake, (right, wrong)) in enumerate(MISTAKES.items()):
    paths[mistake] = os.path.join(out, f"bad-{i}.yaml")
    with open(paths[mistake], "w") as f:
      f.write(good.replace(right, wrong))
  return paths


def _seconds(prefix: str, path: str, runs: str) -> float:
  code = (f"import sys\n{prefix}import local_runner\n"
          f"sys.exit(local_runner.main(['--dataset', {path!r}, '--output-dir', {runs!r}]))")
  start = time.perf_counter()
  proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
  seconds = time.perf_counter() - start
  if proc.returncode != 2 or "error: " not in proc.stderr:
    raise SystemExit(f"expected exit 2 and an error line for {path}, found "
                     f"{proc.returncode}: {proc.stderr[-500:]}")
  return seconds


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--repeats", type=int, default=3,
                      help="fresh processes per mistake and side (the median is printed)")
  return parser


def main(argv=None) -> None:
  args = build_parser().parse_args(argv)
  with tempfile.TemporaryDirectory() as folder:
    runs = os.path.join(folder, "runs")
    print(f"{'mistake':<26} {'baseline':>9} {'project':>9} {'ratio':>6}")
    for mistake, path in _declarations(folder).items():
      times = {"baseline": [], "project": []}
      for _ in range(args.repeats):
        times["baseline"].append(_seconds(BEFORE, path, runs))
        times["project"].append(_seconds("", path, runs))
      base, now = (statistics.median(times[k]) for k in ("baseline", "project"))
      print(f"{mistake:<26} {base:>8.2f}s {now:>8.2f}s {now / base:>6.2f}")


if __name__ == "__main__":
  main()

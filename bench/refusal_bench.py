"""Benchmark: how often a stationary stream's retrains are refused, with
`max_change` judged on the estimate and on its 95% interval, each without
and with slices declared.

    .venv/bin/python -m bench.refusal_bench [--spans 6] [--out DIR]

The bundled digits, shuffled once and cut into `--spans` spans of the same
distribution (nothing drifts, nothing breaks), each with its train and eval
split. One pipeline home per mode, a window of two spans, the default
settings (`max_change` 0.01): every span after the first is a retrain whose
candidate should be as good as the served model, so every refusal is one
the noise of a small eval split caused. Prints the refusals of each mode.
`interval` refuses no model `estimate` passes (components/evaluator/gate.py), so its
count can only be the same or lower; this shows by how much. The `+slices`
modes declare `evaluation.slices: [shape]`: three slices of some 30 eval
examples each, judged on their evidence (their intervals, widened for the
number judged). Nothing breaks in any slice, so each refusal they add is a
false one; the gate's multiplicity control is meant to keep it at none.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def span_rows(count: int) -> list:
  """The digits, shuffled once, in `count` parts: (rows, keys) per span."""
  import numpy as np

  from dataset.convert import digits
  images, labels = digits.load_images()
  order = np.random.default_rng(0).permutation(len(labels))
  return [([digits.digit_features(images[i], labels[i]) for i in part],
           [f"digits-{i}" for i in part]) for part in np.array_split(order, count)]


def write_span(root: str, span: int, rows: list, keys: list) -> None:
  from dataset.convert import digits
  from dataset.convert.rows import write_rows
  write_rows(rows, os.path.join(root, f"span-{span}"), prefix="digits",
             eval_percent=digits.EVAL_PERCENT, keys=keys)


MODES = ("estimate", "interval", "estimate+slices", "interval+slices")


def declaration(folder: str, data: str, mode: str) -> str:
  with open(os.path.join(REPO, "dataset", "examples", "digits.yaml")) as f:
    raw = yaml.safe_load(f)
  raw["name"] = "stream-" + mode.replace("+", "-")
  raw["schema"] = os.path.join(REPO, "dataset", "examples", "digits.pbtxt")
  raw["data"] = {"root": data, "window": 2,
                 "splits": {"train": "span-{SPAN}/train/*.tfrecord.gz",
                            "eval": "span-{SPAN}/eval/*.tfrecord.gz"}}
  measure, sliced = mode.split("+")[0], mode.endswith("+slices")
  raw["evaluation"] = {"max_change_on": measure, **({"slices": ["shape"]} if sliced else {})}
  path = os.path.join(folder, f"{mode}.yaml")
  with open(path, "w") as f:
    yaml.safe_dump(raw, f)
  return path


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--spans", type=int, default=6, help="default: %(default)s")
  parser.add_argument("--out", help="where the runs go (default: a temporary folder, "
                                    "removed afterwards)")
  return parser


def main(argv=None) -> None:
  args = build_parser().parse_args(argv)
  from runtime import startup
  startup.start(quiet=True)  # before dataset/convert/ loads TensorFlow to write the spans
  out = args.out or tempfile.mkdtemp(prefix="refusal_bench-")
  parts = span_rows(args.spans)
  refused = {}
  try:
    for mode in MODES:
      stream = os.path.join(out, mode, "data")
      path = declaration(out, stream, mode)
      refused[mode] = []
      for span, (rows, keys) in enumerate(parts, 1):
        write_span(stream, span, rows, keys)  # a new span arrives; the run follows
        done = subprocess.run(
            [sys.executable, "local_runner.py", "--dataset", path, "--output-dir",
             os.path.join(out, mode, "runs")], cwd=REPO, capture_output=True, text=True)
        verdict = [line for line in done.stdout.splitlines() if line.startswith("model ")]
        print(f"{mode} span {span}: exit {done.returncode}; "
              f"{verdict[0] if verdict else done.stderr.strip()[-500:]}", flush=True)
        if span > 1 and "NOT blessed" in " ".join(verdict):
          refused[mode].append(span)
  finally:
    if not args.out:
      shutil.rmtree(out, ignore_errors=True)
  for mode, spans in refused.items():
    print(f"{mode}: {len(spans)} of {args.spans - 1} retrains refused"
          + (f" (spans {', '.join(map(str, spans))})" if spans else ""))


if __name__ == "__main__":
  main()

"""Benchmark: Transform materializing its output, or not.

    .venv/bin/python -m bench.transform_bench [--json FILE]

Transform writes a full copy of the examples, image bytes included (TFX
issues #2207, #4782), and the Trainer reads that copy. With
`--no-materialize` Transform writes only its graph, and the Trainer's input
pipeline applies it to ExampleGen's examples as it reads them. This runs the
real pipeline with LocalDagRunner, up to the Trainer, both ways, on a table
of 200k rows and on 224x224 JPEG images, each run in its own process and
metadata store, and prints what ML Metadata recorded: the seconds Transform
and the Trainer took, and the bytes Transform wrote.
"""

import argparse
import json
import os
import subprocess
import sys

import yaml

from bench import input_data
from runtime import startup

MODES = {"materialize": "--materialize", "graph only": "--no-materialize"}


def _bytes_under(folder: str) -> int:
  return sum(os.path.getsize(os.path.join(root, name))
             for root, _, names in os.walk(folder) for name in names)


def run_once(decl_path: str, out: str, mode_flag: str, train_steps: int) -> dict:
  """One pipeline run to the Trainer; what ML Metadata says it took."""
  from store.metadata import outcome
  cmd = [sys.executable, "local_runner.py", "--dataset", decl_path, "--output-dir", out,
         "--to-node", "Trainer", "--train-steps", str(train_steps), mode_flag,
         # One short validation: the Trainer's time is then its reading and
         # training, not the per-epoch evaluation of a CNN on the CPU.
         "--train", "epochs=1", "--train", "eval_steps=2"]
  done = subprocess.run(cmd, capture_output=True, text=True)
  if done.returncode != 0:
    raise SystemExit(f"pipeline run failed ({' '.join(cmd)}):\n{done.stderr[-3000:]}")
  name = yaml.safe_load(open(decl_path))["name"]
  result = outcome.read_outcome(os.path.join(out, name, "metadata.sqlite"), name)
  transform_dir = os.path.join(out, name, "pipeline_root", "Transform")
  return {"Transform": result.seconds["Transform"], "Trainer": result.seconds["Trainer"],
          "transform_bytes": _bytes_under(transform_dir)}


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.transform_bench",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", default="runs/bench/transform")
  parser.add_argument("--table-examples", type=int, default=200_000)
  parser.add_argument("--jpeg-examples", type=int, default=8_000)
  parser.add_argument("--json", help="write the results as JSON here")
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)

  cases = [(input_data.generate(os.path.join(args.out, "data"), "T", args.table_examples), 200),
           (input_data.generate(os.path.join(args.out, "data"), "J", args.jpeg_examples), 30)]
  results = {}
  for data, steps in cases:
    decl_path = input_data.declaration_file(data, os.path.join(args.out, f"{data.name}.yaml"))
    for mode, flag in MODES.items():
      out = os.path.join(args.out, "runs", data.name, mode.replace(" ", "-"))
      print(f"{data.name} ({data.count} examples), {mode}: running to the Trainer",
            flush=True)
      results.setdefault(data.name, {})[mode] = run_once(decl_path, out, flag, steps)
  print(f"\n{'data':5s} {'mode':12s} {'Transform s':>12s} {'Trainer s':>10s} "
        f"{'both s':>8s} {'Transform wrote':>16s}")
  for name, modes in results.items():
    for mode, r in modes.items():
      print(f"{name:5s} {mode:12s} {r['Transform']:12.1f} {r['Trainer']:10.1f} "
            f"{r['Transform'] + r['Trainer']:8.1f} {r['transform_bytes'] / 1e6:13.1f} MB")
  if args.json:
    with open(args.json, "w") as f:
      json.dump(results, f, indent=1)
  return 0


if __name__ == "__main__":
  startup.start(quiet=True)  # TensorFlow quiet about CUDA, as every command
  raise SystemExit(main())

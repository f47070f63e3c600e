"""Benchmark: the whole pipeline against a stock TFX pipeline, on the same data.

    .venv/bin/python -m bench.e2e_bench [--data T|photos] [--rows N] [--json FILE]
                                        [--plot FILE.png]

The data (generated once, reused):
  T       dataset T (bench/input_data.py: 25 scalar features and a label,
          GZIP, 8 shards) with --rows rows
  photos  --rows JPEG photos of 96x96 in 8 classes (bench/photos.py),
          converted as a user converts a folder of them (`tfrecords convert
          images`, 20% to eval)

Then it runs, one after the other, each in a fresh process
(bench/e2e_run.py), with LocalDagRunner, caching off:

  stock    TFX's own components with their default settings, as TFX's
           examples build them (bench/stock/): penguin's for T, cifar10's
           for photos (Transform decodes and materializes float pixels);
           ImportExampleGen, StatisticsGen, SchemaGen, ExampleValidator,
           Transform materializing, the Trainer on `tf_dataset_factory`,
           Evaluator, Pusher
  project  this project's pipeline through `local_runner.py`, as a user
           runs it (plus its AnomaliesGate, BaselineModel and ServingCheck)

Both train the same model for --train-steps steps of 64 (800) and bless it
(threshold 0). Printed per component: seconds, rows (or images) per second
(all of them for the data components, the eval split's for the Evaluator,
those trained for the Trainer) and peak memory; then both totals, their
ratio, the eval accuracies, and the issues' goals met or not.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

from bench import input_data, output, photos
from bench.e2e_report import PIPELINES, ceiling_line, goal_lines, plot, table
from runtime import startup


def run_pipeline(pipeline: str, data_dir: str, decl_path: str, kind: str,
                 out: str, args: argparse.Namespace) -> dict:
  """Runs `pipeline` in a fresh process; what it measured (bench/e2e_run.py)."""
  result = os.path.join(out, f"{pipeline}.json")
  log = os.path.join(out, f"{pipeline}.log")
  target = data_dir if pipeline == "stock" else decl_path
  # A fresh start: an earlier run's pushed model would be this one's
  # baseline (evaluated too) and its warm start.
  shutil.rmtree(os.path.join(out, pipeline), ignore_errors=True)
  cmd = [sys.executable, "-m", "bench.e2e_run", pipeline, "--data", target,
         "--out", os.path.join(out, pipeline), "--result", result,
         "--train-steps", str(args.train_steps), "--eval-steps", str(args.eval_steps),
         "--kind", kind]
  with open(log, "w") as f:
    done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
  if done.returncode != 0:
    with open(log) as f:
      tail = f.read()[-3000:]
    raise SystemExit(f"the {pipeline} pipeline failed (exit {done.returncode}); "
                     f"its log is {log}:\n{tail}")
  with open(result) as f:
    measured = json.load(f)
  return {"total_s": measured["total_s"], "peak_mb": measured["peak_mb"],
          "eval_accuracy": measured["eval_accuracy"],
          "image_check": measured.get("image_check", []),
          "components": {k: v["seconds"] for k, v in measured["components"].items()},
          "peak_mb_by_component": {k: v["peak_mb"]
                                   for k, v in measured["components"].items()}}


def model_ceiling(decl_path: str, out: str) -> float:
  """The project's model on batches in memory (bench/model_ceiling.py), in a
  fresh process: images/s."""
  log = os.path.join(out, "model_ceiling.log")
  with open(log, "w") as f:
    done = subprocess.run([sys.executable, "-m", "bench.model_ceiling", decl_path],
                          stdout=subprocess.PIPE, stderr=f, text=True)
  if done.returncode != 0:
    raise SystemExit(f"bench.model_ceiling failed (exit {done.returncode}); its log is {log}")
  return json.loads(done.stdout.strip().splitlines()[-1])["images_per_s"]


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.e2e_bench",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--data", choices=("T", "photos"), default="T",
                      help="a table (T) or photos (default: %(default)s)")
  parser.add_argument("--rows", type=int, default=200_000,
                      help="rows of T, or photos (default: %(default)s)")
  parser.add_argument("--train-steps", type=int, default=800,
                      help="both Trainers' steps of 64 (fewer for a smoke test)")
  parser.add_argument("--eval-steps", type=int, default=20,
                      help="both Trainers' validation batches per epoch (default 20)")
  parser.add_argument("--out", default="runs/bench/e2e",
                      help="data (reused), runs and logs go here")
  parser.add_argument("--only", choices=PIPELINES,
                      help="run one pipeline (no ratio, no chart; for profiling)")
  parser.add_argument("--earlier", help="the JSON of a run at fewer rows, for the "
                      "memory goal")
  parser.add_argument("--json", help="write the results as JSON here")
  parser.add_argument("--plot", help="write a PNG chart here")
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)
  data_folder = os.path.join(os.path.abspath(args.out), "data")
  kind = "photos" if args.data == "photos" else "table"
  out = os.path.abspath(os.path.join(
      args.out, f"photos-{args.rows}" if kind == "photos" else str(args.rows)))
  os.makedirs(out, exist_ok=True)
  if kind == "photos":
    print(f"generating {args.rows:,} photos in {args.out}/data (once)", flush=True)
    data_dir = photos.generate(data_folder, args.rows)
    decl_path = os.path.join(data_dir, "dataset.yaml")
  else:
    print(f"generating T, {args.rows:,} rows, in {args.out}/data (once)", flush=True)
    data = input_data.generate(data_folder, "T", args.rows)
    data_dir = os.path.dirname(data.files[0])
    decl_path = input_data.declaration_file(data, os.path.join(out, "T.yaml"))
  results = {"data": args.data, "rows": args.rows, "train_steps": args.train_steps}
  for pipeline in ([args.only] if args.only else PIPELINES):
    print(f"running the {pipeline} pipeline (log: {out}/{pipeline}.log)", flush=True)
    results[pipeline] = run_pipeline(pipeline, data_dir, decl_path, kind, out, args)
    print(f"  {results[pipeline]['total_s']:.1f} s, peak "
          f"{results[pipeline]['peak_mb']:.0f} MB", flush=True)
  if args.only:
    print(json.dumps(results[args.only]["components"], indent=1))
    output.save(results, args.json, None, plot)
    return 0
  if kind == "photos":
    print("timing the model alone (bench/model_ceiling.py)", flush=True)
    results["ceiling_images_per_s"] = model_ceiling(decl_path, out)
  print()
  print(table(results))
  if kind == "photos":
    print(ceiling_line(results))
  earlier = None
  if args.earlier:
    with open(args.earlier) as f:
      earlier = json.load(f)
  print()
  print("\n".join(goal_lines(results, earlier)))
  output.save(results, args.json, args.plot, plot)
  return 0


if __name__ == "__main__":
  startup.start()
  raise SystemExit(main())

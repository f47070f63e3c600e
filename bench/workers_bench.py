"""One worker against two, as a TrainJob on the stand-in cluster.

    python -m bench.workers_bench [--steps 400] [--json F]

On the bundled digits it runs the local pipeline up to Transform once, then
trains the Trainer's own inputs as a TrainJob (trainer/jobs/trainjob.py) of 1
and of 2 workers on the stand-in cluster (tests/fakes/standin_cluster.py:
each worker a process here), the same steps and per-worker batch, and
prints for each: the training rate (steps/s and examples/s, from the
chief's last progress line), the job's wall time (start-up included) and
the eval accuracy of its export, served in a process of its own.

On 2 cores no speed-up is expected: the two workers share the cores, and
each step adds an all-reduce between processes; the global batch doubles
with the second worker, so each step learns from twice the examples. The
accuracies must agree within noise.
"""

import argparse
import json
import os
import re
import sys
import tempfile
import time

from bench import output

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRESS = re.compile(r"Trainer: step (\d+) of (\d+).*?, (\d+) examples/s")


def _prepare(home: str) -> dict:
  """The Trainer's inputs after a local run up to the Trainer (with two
  local workers, whose inputs file is what a cluster job gets)."""
  from tests.runs import run_local
  code, _, err = run_local("--output-dir", home, "--data-root", os.path.join(home, "data"),
                           "--to-node", "Trainer", "--train-workers", "2",
                           "--train-steps", "20")
  if code:
    sys.exit(f"the local run failed:\n{err[-3000:]}")
  for folder, _, files in os.walk(home):
    if folder.endswith("/job") and "inputs.json" in files:
      with open(os.path.join(folder, "inputs.json")) as f:
        return json.load(f)
  sys.exit(f"no Trainer inputs under {home}")


def _job(cluster, fn_args: dict, workers: int, steps: int, out: str) -> dict:
  from tests.runs import served_accuracy
  args = json.loads(json.dumps(fn_args))
  args.update(model_run_dir=f"{out}/model_run", serving_model_dir=f"{out}/model/Format-Serving",
              train_steps=steps)
  args["custom_config"].update(workers={"count": workers, "engine": "trainjob"},
                               checkpoints=f"{out}/checkpoints")
  args["custom_config"]["training"].update(train_steps=steps, progress_seconds=1)
  path = f"{out}-inputs.json"
  with open(path, "w") as f:
    json.dump(args, f)
  started = time.monotonic()
  step = cluster.start_step(path)
  log, _ = step.communicate(timeout=3600)
  seconds = time.monotonic() - started
  if step.returncode:
    sys.exit(f"the {workers}-worker job failed:\n{log[-3000:]}")
  rates = PROGRESS.findall(log)
  examples_per_s = float(rates[-1][2]) if rates else float("nan")
  global_batch = args["custom_config"]["training"].get("batch_size", 64) * workers
  return {"workers": workers, "steps": steps, "job_seconds": round(seconds, 1),
          "examples_per_s": examples_per_s,
          "steps_per_s": round(examples_per_s / global_batch, 2),
          "eval_accuracy": served_accuracy(f"{out}/model/Format-Serving",
                                           args["eval_files"][0])}


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.workers_bench",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--steps", type=int, default=400, help="train steps of each job")
  parser.add_argument("--json", help="write the results here")
  return parser


def main(argv=None) -> None:
  args = build_parser().parse_args(argv)
  from tests.fakes.standin_cluster import StandInCluster
  with tempfile.TemporaryDirectory(prefix="workers_bench") as home:
    fn_args = _prepare(home)
    with StandInCluster(home) as cluster:
      runs = []
      for workers in (1, 2):
        cluster.store.created.clear()
        runs.append(_job(cluster, fn_args, workers, args.steps,
                         os.path.join(home, f"w{workers}")))
  print(f"{'workers':>8} {'steps/s':>8} {'examples/s':>11} {'job s':>7} {'eval acc':>9}")
  for r in runs:
    print(f"{r['workers']:>8} {r['steps_per_s']:>8.2f} {r['examples_per_s']:>11.0f} "
          f"{r['job_seconds']:>7.1f} {r['eval_accuracy']:>9.4f}")
  one, two = runs
  print(f"2 workers / 1: steps/s x{two['steps_per_s'] / one['steps_per_s']:.2f}, "
        f"examples/s x{two['examples_per_s'] / one['examples_per_s']:.2f}, "
        f"eval accuracy {two['eval_accuracy'] - one['eval_accuracy']:+.4f}")
  output.save({"runs": runs}, args.json, None, None)


if __name__ == "__main__":
  main()

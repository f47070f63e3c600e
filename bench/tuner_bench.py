"""Does a search pay, and what do parallel trials save?

    python -m bench.tuner_bench [--trials 10] [--workers 1 2] [--json F]

On the bundled digits, from a deliberately bad starting config (a learning
rate 100x too small: 2e-5 against the default 2e-3), it runs the whole
local pipeline, each in a fresh process and a fresh output folder:
  untuned   the bad config as it is;
  tuned-N   the same config with `tuning:` declared and `--tune`: a search of
            --trials trials with N trial workers, whose best settings the
            Trainer then trains with.
It prints each run's eval accuracy (the Evaluator's, on the eval split), the
search's time with each worker count, and the best settings found.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import yaml

from bench import output

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD_LEARNING_RATE = 2e-5  # TrainingConfig's default is 2e-3
SPACE = {"learning_rate": {"log_uniform": [1e-5, 3e-2]},
         "width": {"int": [32, 256]},
         "dropout": {"uniform": [0.0, 0.5]}}


def _declaration(folder: str, data: str, tuning: dict = None) -> str:
  with open(os.path.join(HERE, "dataset", "examples", "digits.yaml")) as f:
    raw = yaml.safe_load(f)
  raw["data"]["root"] = data
  raw["schema"] = os.path.join(HERE, "dataset", "examples", "digits.pbtxt")
  if tuning:
    raw["tuning"] = tuning
  path = os.path.join(folder, "tuned.yaml" if tuning else "untuned.yaml")
  with open(path, "w") as f:
    yaml.safe_dump(raw, f)
  return path


def run(decl: str, out: str, train_steps: int, *extra) -> dict:
  """The local pipeline in a fresh process; its accuracy and Tuner time."""
  from store.metadata import outcome
  start = time.time()
  proc = subprocess.run(
      [sys.executable, os.path.join(HERE, "local_runner.py"), "--dataset", decl,
       "--output-dir", out, "--train-steps", str(train_steps), "--threshold", "0",
       "--train", f"learning_rate={BAD_LEARNING_RATE}", *extra],
      capture_output=True, text=True, cwd=HERE)
  if proc.returncode != 0:
    raise RuntimeError(f"the run in {out} failed ({proc.returncode}):\n"
                       + proc.stdout[-2000:] + proc.stderr[-3000:])
  result = outcome.read_outcome(os.path.join(out, "digits", "metadata.sqlite"), "digits")
  tuned = [line for line in proc.stdout.splitlines() if line.startswith("tuned settings")]
  return {"eval_accuracy": result.value, "seconds": round(time.time() - start, 1),
          "search_s": round(result.seconds.get("Tuner", 0.0), 1),
          "settings": tuned[0][len("tuned settings: "):] if tuned else ""}


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.tuner_bench",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--trials", type=int, default=10)
  parser.add_argument("--trial-steps", type=int, default=150,
                      help="train steps per trial (tuning.steps)")
  parser.add_argument("--train-steps", type=int, default=400,
                      help="the Trainer's steps, tuned or not")
  parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
  parser.add_argument("--algorithm", default="bayesian")
  parser.add_argument("--out", help="where the runs go (default: a temporary folder)")
  parser.add_argument("--json", help="write the results here")
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)
  from runtime import startup
  startup.start(quiet=True)  # reading the runs' metadata loads TensorFlow
  out = args.out or tempfile.mkdtemp(prefix="tuner_bench-")
  data = os.path.join(out, "data")
  if not os.path.isdir(data):
    from dataset.convert.digits import write_digits
    write_digits(data)
  tuning = {"algorithm": args.algorithm, "max_trials": args.trials,
            "steps": args.trial_steps, "space": SPACE}
  results = {"trials": args.trials, "trial_steps": args.trial_steps,
             "train_steps": args.train_steps, "cpus": os.cpu_count(),
             "bad_learning_rate": BAD_LEARNING_RATE}
  print(f"digits, learning rate {BAD_LEARNING_RATE} (100x too small), "
        f"{args.train_steps} train steps; search: {args.algorithm}, {args.trials} trials "
        f"of {args.trial_steps} steps; {os.cpu_count()} cores; runs under {out}")
  results["untuned"] = run(_declaration(out, data), os.path.join(out, "untuned"),
                           args.train_steps)
  print(f"untuned   eval accuracy {results['untuned']['eval_accuracy']:.4f}")
  decl = _declaration(out, data, tuning)
  for workers in args.workers:
    key = f"tuned_{workers}"
    results[key] = run(decl, os.path.join(out, key), args.train_steps, "--tune",
                       "--tune-workers", str(workers))
    print(f"tuned, {workers} worker(s)  eval accuracy {results[key]['eval_accuracy']:.4f}"
          f"  search {results[key]['search_s']:.1f} s  ({results[key]['settings']})")
  tuned = [results[f"tuned_{w}"] for w in args.workers]
  best = max(t["eval_accuracy"] for t in tuned)
  beats = all(t["eval_accuracy"] > results["untuned"]["eval_accuracy"] for t in tuned)
  print(f"tuned beats untuned: {'yes' if beats else 'NO'} "
        f"({best:.4f} best tuned vs {results['untuned']['eval_accuracy']:.4f})")
  if len(args.workers) > 1:
    first, last = tuned[0]["search_s"], tuned[-1]["search_s"]
    print(f"search time: {first:.1f} s with {args.workers[0]} worker(s), {last:.1f} s "
          f"with {args.workers[-1]}: {first / last:.2f}x")
  output.save(results, args.json, None, None)
  return 0


if __name__ == "__main__":
  sys.exit(main())

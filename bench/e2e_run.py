"""One pipeline run of the end-to-end benchmark, measured from inside.

    python -m bench.e2e_run {stock,project} --data DIR --out DIR --result FILE
                            [--kind table|photos] [--train-steps N]

bench/e2e_bench.py starts this once per pipeline, so each runs in a fresh
process (no TensorFlow, Beam or ML Metadata state carried over), and the
memory measured is that pipeline's alone. Both run with LocalDagRunner, every
component in this process; the project's ServingCheck starts one process of
its own, which the memory sampler counts.

What it writes to --result (JSON):
  components  id -> {"seconds", "peak_mb"}: seconds from ML Metadata (the
              execution's creation to its last update), peak_mb the most
              memory (RSS of this process and its children, sampled every
              0.2 s) while that component ran
  total_s     wall seconds of the whole run, start to finish
  peak_mb     the most memory during the whole run
  eval_accuracy  the Evaluator's accuracy on the eval split
"""

import argparse
import json
import os
import sys
import threading
import time

import psutil

from runtime import startup

SAMPLE_S = 0.2


def _memory(process: psutil.Process) -> int:
  """The process's proportional set size: its private memory plus its share
  of pages it shares, so that forked workers (ImportExampleGen's split) are
  not counted as full copies of their parent, as RSS would count them."""
  try:
    return process.memory_full_info().pss
  except psutil.AccessDenied:
    return process.memory_info().rss


class MemorySampler(threading.Thread):
  """Memory (PSS) of this process and its children, every SAMPLE_S seconds."""

  def __init__(self):
    super().__init__(daemon=True)
    self.samples = []  # (epoch ms, bytes)
    self._done = threading.Event()

  def run(self):
    me = psutil.Process()
    while not self._done.is_set():
      used = _memory(me)
      for child in me.children(recursive=True):
        try:
          used += _memory(child)
        except psutil.Error:  # it ended in between
          pass
      self.samples.append((time.time() * 1000, used))
      self._done.wait(SAMPLE_S)

  def stop(self):
    self._done.set()
    self.join()

  def peak_mb(self, start_ms=0.0, end_ms=float("inf")) -> float:
    inside = [rss for t, rss in self.samples if start_ms <= t <= end_ms]
    return max(inside, default=0) / 2**20


def run_stock(data: str, out: str, train_steps: int, eval_steps: int, kind: str) -> tuple:
  """Runs the stock pipeline; (its metadata file, its name, accuracy metric)."""
  from tfx import v1 as tfx

  from bench.stock import pipeline
  tfx.orchestration.LocalDagRunner().run(
      pipeline.create_pipeline(data, out, train_steps, eval_steps, kind))
  return os.path.join(out, "metadata.sqlite"), "stock", "sparse_categorical_accuracy"


def run_project(decl_path: str, out: str, train_steps: int, eval_steps: int,
                kind: str) -> tuple:
  """Runs this project's pipeline as a user does, through local_runner.py."""
  import yaml

  import local_runner
  # Threshold 0: the model is blessed, so the serving check and the push
  # run, as in the stock pipeline. Photos are flipped at random in training,
  # as the stock (cifar10) design flips them.
  augment = ["--train", "flip_left_right=true"] if kind == "photos" else []
  if kind == "photos":
    decl_path = _warn_only(decl_path, out)
  code = local_runner.main(["--dataset", decl_path, "--output-dir", out, "--no-cache",
                            "--threshold", "0", "--train-steps", str(train_steps),
                            "--train", f"eval_steps={eval_steps}", *augment])
  if code != 0:
    raise SystemExit(f"the project's pipeline ended with exit status {code}")
  name = yaml.safe_load(open(decl_path))["name"]
  return os.path.join(out, name, "metadata.sqlite"), name, "sparse_categorical_accuracy"


def _warn_only(decl_path: str, out: str) -> str:
  """The declaration with every image check at `warn`, written in `out`:
  the photos are crops of two photos, so copies across the splits are
  there by design; the benchmark reports them and goes on."""
  import yaml

  from dataset import declaration
  from dataset.image_checks import DEFAULTS
  with open(decl_path) as f:
    raw = yaml.safe_load(f)
  raw["data"]["root"] = declaration.load(decl_path).data.root
  raw["image_checks"] = {kind: "warn" for kind in DEFAULTS}
  os.makedirs(out, exist_ok=True)
  path = os.path.join(out, "warn.yaml")
  with open(path, "w") as f:
    yaml.safe_dump(raw, f, sort_keys=False)
  return path


def measure(store_path: str, pipeline: str, metric: str, sampler: MemorySampler) -> dict:
  from components.evaluator import evaluation
  from store.metadata import outcome
  from store.metadata import store as mlmd_store
  store = mlmd_store.open_store(store_path)
  run = mlmd_store.find_run(store, pipeline, None)
  components = {}
  for node, node_run in run.nodes.items():
    e = node_run.execution
    # One sample period either side: a component shorter than that still
    # has a sample.
    components[node] = {"seconds": node_run.seconds, "peak_mb": sampler.peak_mb(
        e.create_time_since_epoch - SAMPLE_S * 1000,
        e.last_update_time_since_epoch + SAMPLE_S * 1000)}
  evaluated = mlmd_store.output(store, run, "Evaluator", "evaluation")
  accuracy = evaluation.load(evaluated.uri)[()]["candidate"][metric]
  checked = outcome.read_outcome(store_path, pipeline).image_check
  return {"components": components, "eval_accuracy": accuracy,
          "image_check": [f["line"] for f in checked.get("findings", [])]}


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.e2e_run",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("pipeline", choices=("stock", "project"))
  parser.add_argument("--data", required=True, help="the data folder (stock) or "
                      "its declaration (project)")
  parser.add_argument("--out", required=True)
  parser.add_argument("--result", required=True)
  parser.add_argument("--train-steps", type=int, default=800)
  parser.add_argument("--eval-steps", type=int, default=20,
                      help="both Trainers' validation batches per epoch")
  parser.add_argument("--kind", choices=("table", "photos"), default="table",
                      help="the data's kind: the stock pipeline's design follows it")
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)
  sampler = MemorySampler()
  sampler.start()
  started = time.time()
  if args.pipeline == "stock":
    found = run_stock(args.data, args.out, args.train_steps, args.eval_steps, args.kind)
  else:
    found = run_project(args.data, args.out, args.train_steps, args.eval_steps, args.kind)
  total = time.time() - started
  sampler.stop()
  result = measure(*found, sampler)
  result["peak_mb"] = sampler.peak_mb()
  result["total_s"] = total
  with open(args.result, "w") as f:
    json.dump(result, f, indent=1)
  return 0


if __name__ == "__main__":
  startup.start()  # the project's Keras choice, tf-keras, for both pipelines
  sys.exit(main())

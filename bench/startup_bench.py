"""Benchmark: what a process pays in imports before it does any work.

    .venv/bin/python -m bench.startup_bench [--repeats 3]

A Kubeflow step is a fresh process (a pod) and a local run is one too, so
their imports are paid in every step of every run. Each case is timed, as
a fresh process, two ways, interleaved, and the medians' ratio printed:
- **project**: as the process starts now, `startup.start()` first (which
  has `tfx.components` skip its `__init__`: runtime/lazy_imports.py);
- **baseline**: the same imports as they were before: `tfx.components`
  whole, `tfx.v1` (TFX's public API, whose `extensions` import
  BulkInferrer and Google Cloud's clients) where the project's module
  imported it, and a step without KFP's `_KFP_RUNTIME` (the compiled spec
  now sets it: `kfp` skips its compiler and API client).

The cases: the Kubeflow container with a project step's module (DriftGate,
the Tuner) or a stock executor (StatisticsGen), the local runner with
the pipeline's definition and LocalDagRunner, and a training worker (a
job's pod, started again at each restart), whose baseline also imports
TFX's FnArgs class as it did (with `tfx.components` lazy, as then): now it
reads its inputs into a plain namespace (trainer/jobs/inputs.py).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

from kubeflow.steps.records import KFP_RUNTIME_ENV
from runtime import startup

REPO = __file__.rsplit("/bench/", 1)[0]

# Undoes lazy_components, as a process that never called it.
_WHOLE = ("import sys\nfrom runtime import lazy_imports\n"
          "sys.meta_path[:] = [f for f in sys.meta_path "
          "if not isinstance(f, lazy_imports._Finder)]\nimport tfx.components\n")
# case -> (its imports, what the baseline imported besides, whether the
# baseline imported `tfx.components` whole)
CASES = {
    "step: DriftGate": ("import kubeflow.steps.entrypoint, components.drift_gate.drift_gate", "tfx.v1",
                        True),
    "step: Tuner": ("import kubeflow.steps.entrypoint, components.tuner.tuner", "tfx.v1", True),
    "step: StatisticsGen": ("import kubeflow.steps.entrypoint, "
                            "tfx.components.statistics_gen.executor", "", True),
    "local runner": ("import local_runner, pipeline.pipeline, "
                     "tfx.orchestration.local.local_dag_runner", "tfx.v1", True),
    "training worker": ("import trainer.worker, trainer.run",
                        "tfx.components.trainer.fn_args_utils", False),
}


def _seconds(code: str, env=None) -> float:
  start = time.perf_counter()
  subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, env=env,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  return time.perf_counter() - start


def measure(repeats: int) -> dict:
  results = {}
  for name, (imports, before, whole) in CASES.items():
    runs = {"project": [], "baseline": []}
    baseline = ((_WHOLE if whole else "") + (f"import {before}\n" if before else "")
                + imports)
    # A compiled step's container has KFP's runtime switch (kubeflow/compile).
    step = {**os.environ, KFP_RUNTIME_ENV: "true"} if name.startswith("step") else None
    for _ in range(repeats):
      runs["project"].append(_seconds(f"from runtime import startup\nstartup.start()\n{imports}", step))
      runs["baseline"].append(_seconds(f"from runtime import startup\nstartup.start()\n{baseline}"))
    results[name] = {k: statistics.median(v) for k, v in runs.items()}
  return results


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--repeats", type=int, default=3,
                      help="fresh processes per case and side (the median is printed)")
  return parser


def main(argv=None) -> None:
  args = build_parser().parse_args(argv)
  startup.start(quiet=True)
  print(f"{'case':<22} {'baseline':>9} {'project':>9} {'ratio':>6}")
  for name, result in measure(args.repeats).items():
    print(f"{name:<22} {result['baseline']:>8.2f}s {result['project']:>8.2f}s "
          f"{result['project'] / result['baseline']:>6.2f}")


if __name__ == "__main__":
  main()

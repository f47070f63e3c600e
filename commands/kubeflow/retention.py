"""`python -m commands.kubeflow retention`: retention of a compiled pipeline's runs
from any machine that reaches the bucket, with the compiled spec for the
pipeline's root and name; it dry-runs unless told `--delete`
(kubeflow/steps/retention.py plans and deletes, as the step does)."""

import argparse

from commands.run.flags import keep_count
from runtime import run_layout, storage


def _command(args) -> int:
  from commands.kubeflow import runs
  from kubeflow.compile import retention_step
  from kubeflow.compile import spec as spec_edit
  from kubeflow.steps import retention
  spec = runs.load_spec(args.spec)[0]
  defaults = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  serving_dir = args.serving_dir or defaults.get("serving_dir", {}).get("defaultValue", "")
  layout = run_layout.of_run(run_layout.KUBEFLOW, spec["defaultPipelineRoot"],
                             spec["pipelineInfo"]["name"], "")
  storage.check([layout.runs, serving_dir])
  steps = spec_edit.tasks(spec)
  unkeyed = retention_step.without_epoch(steps)
  if args.delete and unkeyed:
    raise argparse.ArgumentTypeError(
        f"--spec {args.spec}: expected a spec whose cached first steps take the cache "
        f"epoch, found {', '.join(unkeyed)} without it (compiled before it existed): "
        "compile again, or Kubeflow's cache may hand back what this deletes")
  never = set(retention_step.history(steps))
  print("\n".join(retention.apply(layout, args.keep, serving_dir, never, args.delete)))
  return 0


def add_parser(sub) -> None:
  r = sub.add_parser("retention", help="delete what only a pipeline's older runs used "
                                       "(lists it unless --delete)")
  r.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  r.add_argument("--keep", type=keep_count, required=True, metavar="N",
                 help="keep the artifacts of the newest N runs")
  r.add_argument("--delete", action="store_true",
                 help="delete (default: list what would be deleted, and the bytes)")
  r.add_argument("--serving-dir", help="default: the spec's serving_dir")
  r.set_defaults(func=_command)

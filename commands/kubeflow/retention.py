"""`python -m commands.kubeflow retention`: retention of a compiled pipeline's runs
from any machine that reaches the bucket, with the compiled spec for the
pipeline's root and name; it dry-runs unless told `--delete`
(kubeflow/steps/retention.py plans and deletes, as the step does). The runs
are found in the layout of the backend the spec was compiled for
(kubeflow/api/run_folders.py `runs_folder`): on Vertex AI, the project's
folder of the root."""

import argparse

from commands.run.flags import keep_count
from runtime import storage


def _command(args) -> int:
  from commands.kubeflow import runs
  from kubeflow.api import run_folders
  from kubeflow.compile import retention_step
  from kubeflow.compile import spec as spec_edit
  from kubeflow.compile.backend import compiled_backend
  from kubeflow.steps import retention
  spec = runs.load_spec(args.spec)[0]
  defaults = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  serving_dir = args.serving_dir or defaults.get("serving_dir", {}).get("defaultValue", "")
  root = args.pipeline_root or spec["defaultPipelineRoot"]
  storage.check_scheme(root, "--pipeline-root")
  storage.check([root, serving_dir])
  layout = run_folders.runs_folder(args.backend or compiled_backend(args.spec), root,
                                   spec["pipelineInfo"]["name"], args.project)
  if layout is None:
    print(f"no project's run folder under {root} (Vertex AI's layout): "
          "nothing to keep or delete")
    return 0
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
  r.add_argument("--pipeline-root", help="where the runs wrote (default: the spec's)")
  r.add_argument("--backend", choices=("kubeflow", "vertex"),
                 help="whose layout the runs are in (default: the backend --spec was "
                      "compiled for)")
  r.add_argument("--project", help="--backend vertex: the project (id or number) whose "
                 "runs to keep (default: the one project whose runs the root holds)")
  r.set_defaults(func=_command)

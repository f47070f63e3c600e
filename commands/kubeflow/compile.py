"""`python -m commands.kubeflow compile`: its flags, and the checks before compiling."""

import argparse
import os
import re
from typing import Dict

from commands.run import flags
from commands.run.flags import keep_count
from kubeflow import profile_paths
from kubeflow.compile import backend, exit_handler, launcher_config, platform, train_job
from kubeflow.compile.spec import DEFAULT_RETRIES
from kubeflow.errors import CompileError
from pipeline.config import Resources
from trainer.jobs import CLUSTER_ENGINES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGITS = os.path.join(REPO, "dataset", "examples", "digits.yaml")


def resource(text: str):
  """NODE:cpu=4,memory=16,gpus=1[,gpu_type=nvidia.com/gpu] -> (NODE, Resources fields)."""
  node, _, spec = text.partition(":")
  types = {"cpu": float, "memory": float, "gpus": int, "gpu_type": str}
  values = {}
  for item in filter(None, spec.split(",")):
    key, _, value = item.partition("=")
    if key not in types:
      raise argparse.ArgumentTypeError(
          f"--resource {text!r}: expected keys {', '.join(types)}, found {key!r}")
    try:
      values["memory_gb" if key == "memory" else key] = types[key](value)
    except ValueError:
      raise argparse.ArgumentTypeError(
          f"--resource {text!r}: {key} expected a {types[key].__name__}, "
          f"found {value!r}") from None
  if not node or not values:
    raise argparse.ArgumentTypeError(
        f"--resource: expected NODE:cpu=N,memory=GB,gpus=N, found {text!r}")
  return node, values


# argparse type of `--retries`.
retries = flags.whole_number(0, 10)


def env_var(text: str):
  """NAME=VALUE -> (NAME, VALUE)."""
  name, sep, value = text.partition("=")
  if not (sep and name):
    raise argparse.ArgumentTypeError(f"--env: expected NAME=VALUE, found {text!r}")
  return name, value


def run(args) -> int:
  """Prepares the run as the local runner does (commands/run/preparation.py:
  the declaration, the locations, the first records unless skipped), then
  compiles."""
  resources = {node: Resources(**values) for node, values in args.resource}
  # A declaration that does not parse, and what the backend cannot take,
  # are said before TensorFlow loads, and before the records are read (an
  # s3:// root would fail there otherwise).
  decl = flags.load_declaration(args)
  exit_handler.check_flags(args.notify, args.final_status, has_step=False)
  if args.backend == backend.VERTEX:
    backend.check_vertex(args, args.data_root or decl.data.root,
                         flags.pipeline_name(args, decl))
  backend.check_gpus(args.backend, args.resource, args.train_engine or "",
                     args.train_workers)
  train_job.check_machine(args)
  # Vertex AI has no launcher ConfigMap; its steps reach Google Cloud only.
  launcher = (launcher_config.configmap(args.pipeline_root, dict(args.env), args.secret_env)
              if args.backend == backend.KUBEFLOW else None)
  env = steps_env(args, decl)
  # TensorFlow and TFX load here, once the flags have parsed.
  from commands.run.preparation import prepare_compiled
  from kubeflow.compile.compiler import check_name, compile_pipeline
  config = prepare_compiled(args, resources)
  check_name(config.pipeline_name)
  spec, job = compile_pipeline(config, args.image, args.output_dir,
                               env=env, platform_args=args,
                               notify=args.notify, final_status=args.final_status,
                               retries=args.retries,
                               keep_runs=args.keep_runs, backend=args.backend)
  print(f"pipeline spec: {spec}\npipeline job: {job}")
  apply = launcher_config.write(args.output_dir, launcher, args.namespace)
  if apply:
    print(apply)
  return 0


def steps_env(args, decl) -> Dict[str, str]:
  """Every step's environment: `--env`, and on a multi-user install, when
  the steps hold the profile's keys, the namespace whose prefixes they keep
  to (kubeflow/profile_paths.py).

  Raises:
    CompileError: a path those keys do not reach, before the records are
      read (the store would refuse them).
  """
  env = dict(args.env)
  profile = (launcher_config.profile_namespace(args.namespace, args.secret_env)
             if args.backend == backend.KUBEFLOW else None)
  if profile:
    refused = profile_paths.outside(profile, {
        "--pipeline-root": args.pipeline_root,
        ("--data-root" if args.data_root else f"data.root of {args.dataset}"): decl.data.root,
        "--serving-dir": flags.compiled_serving_dir(args, decl)})
    if refused:
      raise CompileError(refused)
    env[profile_paths.PROFILE_ENV] = profile
  return env


def add_parser(sub) -> None:
  c = sub.add_parser("compile", help="compile the pipeline for Kubeflow Pipelines v2")
  flags.add_pipeline_flags(c, default_dataset=DIGITS)
  backend.add_flag(c)
  c.add_argument("--image", required=True, help="REGISTRY/NAME:TAG built from kubeflow/Dockerfile")
  c.add_argument("--pipeline-root", required=True, help="URI for artifacts, e.g. gs://bucket/root")
  c.add_argument("--output-dir", required=True, help="where the compiled files go")
  c.add_argument("--serving-dir", help="default for the push destination "
                                       "(default: PIPELINE_ROOT/NAME/serving)")
  c.add_argument("--namespace", help="the profile namespace the runs go to, on a multi-user "
                 "install: with the store's keys from its mlpipeline-minio-artifact Secret, "
                 "every path must lie under the prefixes they reach (docs/kubeflow.md, "
                 "\"A multi-user namespace\")")
  c.add_argument("--resource", action="append", type=resource, default=[],
                 metavar="NODE:cpu=N,memory=GB,gpus=N[,gpu_type=T]",
                 help="a component's container resources (repeatable)")
  c.add_argument("--env", action="append", type=env_var, default=[], metavar="NAME=VALUE",
                 help="an environment variable for every step, e.g. "
                      "S3_ENDPOINT=http://seaweedfs.kubeflow:9000 (Kubeflow Pipelines "
                      "2.16+; http://minio-service.kubeflow:9000 before); no secrets: "
                      "see --secret-env")
  c.add_argument("--train-engine", choices=CLUSTER_ENGINES,
                 help="with --train-workers N > 1: the engine that runs the Trainer's "
                      "workers: a Kubeflow Trainer TrainJob, a Training Operator "
                      "TFJob, or a Vertex AI CustomJob (docs/kubeflow.md, "
                      "\"Training on several machines\")")
  _train_job_flags(c)
  platform.add_flags(c)
  exit_handler.add_flag(c)
  c.add_argument("--retries", type=retries, default=DEFAULT_RETRIES, metavar="N",
                 help="start a failed step's pod again up to N times, with backoff "
                      "(default 2; 0: no retry policy, though a 2.17 install still retries a "
                      "deleted pod twice); see docs/kubeflow.md for which backends honour it")
  c.add_argument("--keep-runs", type=keep_count, metavar="N",
                 help="end each run deleting what only runs older than the newest N "
                      "used (kubeflow/steps/retention.py)")
  c.add_argument("--skip-data-check", action="store_true",
                 help="do not read the first records (when this machine cannot "
                      "reach the data)")
  c.set_defaults(func=run)


def _train_job_flags(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--train-timeout", type=flags.whole_number(1, unit="a number of seconds"),
                      metavar="SECONDS",
                      help="with --train-workers: delete the Trainer's job and fail the "
                           "step if it has not finished after this long (default: none)")
  parser.add_argument("--train-heartbeat-timeout",
                      type=flags.whole_number(30, unit="a number of seconds"), metavar="SECONDS",
                      help="--train-engine tfjob: restart a worker that has not finished a "
                           "training step for this long, as frozen (default 300; "
                           "docs/kubeflow.md)")
  parser.add_argument("--train-machine-type", metavar="TYPE",
                      help="--train-engine vertex: each worker's machine (default: "
                           "one of the family its GPU attaches to, e.g. g2-standard-8 "
                           "for one NVIDIA_L4; n1-standard-4 without a GPU)")
  helps = {"project": "the CustomJob's project (default: the PipelineJob's)",
           "region": "the CustomJob's region (default: the PipelineJob's)",
           "serviceAccount": "the service account the workers run as (default: the "
                             "PipelineJob's on Vertex, docs/kubeflow.md says which roles it "
                             "needs; the step's own for TrainJob and TFJob)",
           "network": "the VPC the workers are peered with (default: the PipelineJob's)"}
  for key, (flag, what, pattern, metavar) in train_job.VERTEX_FLAGS.items():
    engines = "vertex, trainjob, tfjob" if key == "serviceAccount" else "vertex"
    parser.add_argument(flag, type=_matching(what, pattern), metavar=metavar,
                        help=f"--train-engine {engines}: {helps[key]}")


def _matching(what: str, pattern: str):
  """argparse type: the text when it is `what`, else why not (argparse
  names the flag)."""
  def check(text: str) -> str:
    if not re.fullmatch(pattern, text):
      raise argparse.ArgumentTypeError(f"expected {what}, found {text!r}")
    return text
  return check

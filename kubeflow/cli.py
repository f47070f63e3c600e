"""python -m kubeflow: compile the pipeline, submit a run, schedule retraining.

    python -m kubeflow compile --image REGISTRY/NAME:TAG --pipeline-root URI --output-dir DIR
    python -m kubeflow submit --spec DIR/pipeline.yaml --host URL
    python -m kubeflow schedule --spec DIR/pipeline.yaml --host URL --name NAME --cron "0 3 * * *"
    python -m kubeflow schedules list|pause|resume|delete [NAME] --host URL

Exit status: 0 done; 1 Kubeflow refused or could not be reached; 2 bad input
(flags, declaration, cron expression). Errors are one line; -v adds the
traceback and the libraries' logs.
"""

import argparse
import dataclasses
import datetime
import json
import logging
import os
import sys
import traceback
from typing import List, Optional

import kfp.client as kfp_client_env
import kfp_server_api
import yaml

import storage
from dataset import check, declaration
from kubeflow import client, cron, platform, window
from kubeflow.compile import CompileError, check_name, compile_pipeline
from pipeline import flags
from pipeline.config import ConfigError, Resources

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS = os.path.join(REPO, "datasets", "digits.yaml")
BAD_INPUT = (declaration.DeclarationError, ConfigError, CompileError,
             cron.CronError, argparse.ArgumentTypeError, storage.StorageError)


def resource(text: str):
  """NODE:cpu=4,memory=16,gpus=1[,gpu_type=nvidia.com/gpu] -> (NODE, Resources)."""
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


def env_var(text: str):
  """NAME=VALUE -> (NAME, VALUE)."""
  name, sep, value = text.partition("=")
  if not (sep and name):
    raise argparse.ArgumentTypeError(f"--env: expected NAME=VALUE, found {text!r}")
  return name, value


def _check_locations(args, decl, serving_dir: str) -> None:
  """Every location is one the steps' TensorFlow opens, and the data root
  is one the cluster can reach.

  Raises:
    StorageError: a scheme TensorFlow cannot open (minio:// included).
    CompileError: the declaration's data root is a folder of this machine
      and --data-root was not given.
  """
  storage.check_scheme(args.pipeline_root, "--pipeline-root")
  storage.check_scheme(serving_dir, "--serving-dir")
  storage.check_scheme(decl.data.root, "--data-root" if args.data_root else
                       f"data.root of {args.dataset}")
  if not args.data_root and not storage.scheme(decl.data.root):
    raise CompileError(
        f"data.root of {args.dataset} is {decl.data.root}, a folder of this machine, "
        f"which the cluster's pods cannot read; expected --data-root with a bucket "
        f"URI (gs://, s3://), or a path mounted in the pods given explicitly")


def _compile(args) -> int:
  decl = flags.load_declaration(args)
  name = flags.pipeline_name(args, decl)
  serving_dir = args.serving_dir or f"{args.pipeline_root.rstrip('/')}/{name}/serving"
  resources = {node: Resources(**values) for node, values in args.resource}
  config = flags.pipeline_config(
      args, decl, pipeline_root=args.pipeline_root, serving_dir=serving_dir,
      runtime_parameters=True, resources=resources)
  if "Trainer" in resources and resources["Trainer"].gpus:
    # The Trainer stops, rather than train on the CPU, if it cannot use them.
    config = dataclasses.replace(config, training=dataclasses.replace(
        config.training, gpus=resources["Trainer"].gpus))
  check_name(config.pipeline_name)
  _check_locations(args, decl, serving_dir)
  if args.skip_data_check:
    print(f"skipped: the check of the declaration against the records under "
          f"{decl.data.root} (--skip-data-check)", file=sys.stderr)
  else:
    storage.check([decl.data.root], "--data-root ")
    check.check_records(decl)
  spec, job = compile_pipeline(config, args.image, args.output_dir,
                               env=dict(args.env), platform_args=args)
  print(f"pipeline spec: {spec}\npipeline job: {job}")
  return 0


def _params(args) -> dict:
  """The runtime parameters: the flags', and the span window resolved now."""
  for flag, uri in (("--data-root", args.data_root), ("--serving-dir", args.serving_dir)):
    if uri:
      storage.check_scheme(uri, flag)
  extra = {}
  saved = window.load(args.spec)
  if saved:
    resolved = window.resolve_params(saved, args.data_root, args.train_steps,
                                     args.serving_dir)
    print(f"window: {', '.join(json.loads(resolved['example_splits']))}")
    print(f"baseline: {resolved['served_version']}")
    extra.update(resolved)
  for item in args.param or ():
    key, sep, value = item.partition("=")
    if not sep:
      raise argparse.ArgumentTypeError(f"--param: expected NAME=VALUE, found {item!r}")
    extra[key] = value
  train_steps = None if saved else args.train_steps  # in the window's train_args
  return client.runtime_params(args.data_root, train_steps, args.serving_dir, extra)


def _spec_name(path: str) -> str:
  try:
    with open(path, encoding="utf-8") as f:
      # The pipeline spec, then the Kubernetes platform config if any.
      return next(yaml.safe_load_all(f))["pipelineInfo"]["name"]
  except (OSError, yaml.YAMLError, KeyError, TypeError, StopIteration) as e:
    raise argparse.ArgumentTypeError(
        f"--spec {path}: expected a pipeline spec written by 'compile', "
        f"found {type(e).__name__}: {e}") from None


def _submit(args) -> int:
  name = _spec_name(args.spec)
  params = _params(args)
  kfp_client = _connect(args)
  run_name = args.run_name or f"{name}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
  run = client.submit(kfp_client, args.spec, name, args.experiment or name,
                      run_name, params, args.namespace)
  print(f"run: {run.run_id} ({run_name}) in experiment {args.experiment or name}")
  return 0


def _schedule(args) -> int:
  name = _spec_name(args.spec)
  if window.load(args.spec):
    raise argparse.ArgumentTypeError(
        f"--spec {args.spec}: its data has spans, and a Kubeflow recurring run "
        f"passes the same parameters to every run, so it would read the same "
        f"spans forever; expected data without spans, found {window.FILE}. "
        f"Run 'python -m kubeflow submit' from a scheduler instead: each submit "
        f"resolves the window anew (docs/kubeflow.md: Retraining on a schedule)")
  expression = cron.normalize(args.cron)  # a typo fails before any connection
  params = _params(args)
  kfp_client = _connect(args)
  new, replaced = client.schedule(
      kfp_client, args.spec, name, args.experiment or name, args.name, expression,
      params, no_catchup=not args.catchup, namespace=args.namespace)
  verb = "updated" if replaced else "created"
  print(f"schedule {verb}: {args.name} ({new.recurring_run_id}), cron "
        f"{expression!r}, max concurrency 1, "
        f"catch-up {'on' if args.catchup else 'off'}")
  return 0


def _schedules(args) -> int:
  kfp_client = _connect(args)
  experiment_id = client.find_experiment(kfp_client, args.experiment, args.namespace)
  if args.action == "list":
    for r in client.recurring_runs(kfp_client, None, experiment_id):
      trigger = r.trigger.cron_schedule.cron if r.trigger and r.trigger.cron_schedule else "?"
      print(f"{r.display_name}\t{r.status}\t{trigger}\t{r.recurring_run_id}")
    return 0
  if not args.name:
    raise argparse.ArgumentTypeError(f"schedules {args.action}: expected a schedule NAME")
  found = client.recurring_runs(kfp_client, args.name, experiment_id)
  if not found:
    raise client.KubeflowError(f"no schedule named {args.name!r} in experiment "
                               f"{args.experiment!r}")
  action = {"pause": kfp_client.disable_recurring_run,
            "resume": kfp_client.enable_recurring_run,
            "delete": kfp_client.delete_recurring_run}[args.action]
  for r in found:
    action(r.recurring_run_id)
  done = {"pause": "paused", "resume": "resumed", "delete": "deleted"}[args.action]
  print(f"{done}: {args.name}")
  return 0


def _connection_flags(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--host", help="Kubeflow Pipelines API endpoint "
                                     "(default: $KF_PIPELINES_ENDPOINT)")
  parser.add_argument("--namespace", help="Kubeflow profile namespace (multi-user)")
  parser.add_argument("--token", help="bearer token (default: the service-account token file "
                           "at $KF_PIPELINES_SA_TOKEN_PATH, if any)")


def _run_flags(parser: argparse.ArgumentParser) -> None:
  _connection_flags(parser)
  parser.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  parser.add_argument("--experiment", help="default: the pipeline's name")
  parser.add_argument("--data-root", help="runtime parameter: where the records are")
  parser.add_argument("--train-steps", type=int, help="runtime parameter")
  parser.add_argument("--serving-dir", help="runtime parameter: where models are pushed")
  parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                      help="any other runtime parameter (repeatable)")


def _connect(args):
  """kfp's usual sources: --host or $KF_PIPELINES_ENDPOINT; --token or the
  service-account token file that Kubeflow mounts in its pods."""
  host = args.host or os.environ.get("KF_PIPELINES_ENDPOINT")
  if not host:
    raise argparse.ArgumentTypeError(
        "--host: expected the Kubeflow Pipelines API endpoint (or "
        "$KF_PIPELINES_ENDPOINT), found neither")
  return client.connect(host, args.namespace, args.token or _token_from_file())


def _token_from_file() -> Optional[str]:
  path = os.environ.get(kfp_client_env.KF_PIPELINES_SA_TOKEN_ENV,
                        kfp_client_env.KF_PIPELINES_SA_TOKEN_PATH)
  try:
    with open(path, encoding="utf-8") as f:
      return f.read().strip() or None
  except OSError:
    return None


def parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(prog="python -m kubeflow", description=__doc__.split("\n")[0])
  p.add_argument("-v", "--verbose", action="store_true")
  sub = p.add_subparsers(dest="command", required=True)
  c = sub.add_parser("compile", help="compile the pipeline for Kubeflow Pipelines v2")
  flags.add_pipeline_flags(c, default_dataset=DIGITS)
  c.add_argument("--image", required=True, help="REGISTRY/NAME:TAG built from kubeflow/Dockerfile")
  c.add_argument("--pipeline-root", required=True, help="URI for artifacts, e.g. gs://bucket/root")
  c.add_argument("--output-dir", required=True, help="where the compiled files go")
  c.add_argument("--serving-dir", help="default for the push destination "
                                       "(default: PIPELINE_ROOT/NAME/serving)")
  c.add_argument("--resource", action="append", type=resource, default=[],
                 metavar="NODE:cpu=N,memory=GB,gpus=N[,gpu_type=T]",
                 help="a component's container resources (repeatable)")
  c.add_argument("--env", action="append", type=env_var, default=[], metavar="NAME=VALUE",
                 help="an environment variable for every step, e.g. "
                      "S3_ENDPOINT=http://minio-service.kubeflow:9000 (no secrets: "
                      "see --secret-env)")
  platform.add_flags(c)
  c.add_argument("--skip-data-check", action="store_true",
                 help="do not read the first records (when this machine cannot "
                      "reach the data)")
  c.set_defaults(func=_compile)
  s = sub.add_parser("submit", help="start one run")
  _run_flags(s)
  s.add_argument("--run-name", help="default: PIPELINE-YYYYmmdd-HHMMSS")
  s.set_defaults(func=_submit)
  r = sub.add_parser("schedule", help="create or update a recurring run")
  _run_flags(r)
  r.add_argument("--name", required=True, help="the schedule's stable name")
  r.add_argument("--cron", required=True, help="e.g. '0 3 * * *' (5 or 6 fields)")
  r.add_argument("--catchup", action="store_true",
                 help="run missed intervals after a pause (default: no catch-up)")
  r.set_defaults(func=_schedule)
  ls = sub.add_parser("schedules", help="list, pause, resume or delete schedules")
  ls.add_argument("action", choices=("list", "pause", "resume", "delete"))
  ls.add_argument("name", nargs="?")
  _connection_flags(ls)
  ls.add_argument("--experiment", required=True)
  ls.set_defaults(func=_schedules)
  return p


def main(argv: Optional[List[str]] = None) -> int:
  try:
    args = parser().parse_args(argv)
  except SystemExit as e:  # argparse has printed the one-line error
    return e.code
  if args.verbose:
    logging.getLogger().setLevel(logging.INFO)
  try:
    return args.func(args)
  except BAD_INPUT as e:
    status, message = 2, str(e)
  except client.KubeflowError as e:
    status, message = 1, str(e)
  except kfp_server_api.ApiException as e:  # any other call Kubeflow refused
    status, message = 1, f"Kubeflow refused the request: {client.describe(e)}"
  if args.verbose:
    traceback.print_exc()
  print(f"error: {message}", file=sys.stderr)
  return status

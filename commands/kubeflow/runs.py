"""`python -m commands.kubeflow submit`, `schedule`, `schedules` and `runs`: talking
to a Kubeflow Pipelines API server (kubeflow/api/client.py).

Each command imports kubeflow/api/client.py, and so kfp, when it runs: `--help`
and a bad flag answer without loading kfp, and no command here loads TFX."""

import argparse
import contextlib
import datetime
import functools
import os
import tempfile
from typing import List, Optional

import yaml

from commands.kubeflow import flags
from kubeflow.api import google_cloud, multi_user, run_folders, schedules, vertex
from kubeflow.compile import exit_handler
from runtime import storage
from runtime.process import who


def _params(args, spec: dict, scheduled_by: str) -> dict:
  """The runtime parameters the flags set. With spans, nothing is listed
  here: the pipeline's first step finds its window (kubeflow/steps/span_window.py)."""
  from kubeflow.api import client  # kfp: when the command runs
  from kubeflow.compile.backend import VERTEX, sent_to
  from kubeflow.compile.vertex_places import check_location
  on_vertex = sent_to(args.backend, args.spec) == VERTEX
  for flag, uri in (("--data-root", args.data_root), ("--serving-dir", args.serving_dir),
                    ("--pipeline-root", args.pipeline_root)):
    if uri:
      storage.check_scheme(uri, flag)
      if on_vertex:  # what a Vertex step cannot reach, before anything is sent
        check_location(flag, uri)
  extra = {}
  for item in args.param or ():
    key, sep, value = item.partition("=")
    if not sep:
      raise argparse.ArgumentTypeError(f"--param: expected NAME=VALUE, found {item!r}")
    extra[key] = value
  declared = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  return client.runtime_params(args.data_root, args.train_steps, args.serving_dir, extra,
                               declared, scheduled_by)


def load_spec(path: str) -> List[dict]:
  """The documents of a compiled file: the pipeline spec, then the platform
  config if any. Read by libyaml where PyYAML has it (0.08 s, not 0.8 s)."""
  loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
  try:
    with open(path, encoding="utf-8") as f:
      documents = [d for d in yaml.load_all(f, Loader=loader) if d]
    documents[0]["pipelineInfo"]["name"]
    return documents
  except (OSError, yaml.YAMLError, KeyError, TypeError, IndexError) as e:
    raise argparse.ArgumentTypeError(
        f"--spec {path}: expected a pipeline spec written by 'compile', "
        f"found {type(e).__name__}: {e}") from None


@contextlib.contextmanager
def _spec_file(args):
  """(the spec's path, the spec): with --notify or --final-status, a copy
  with the exit step as they ask."""
  documents = load_spec(args.spec)
  exit_handler.check_flags(args.notify, args.final_status,
                           has_step=exit_handler.has_exit_step(documents[0]))
  if not (args.notify or args.final_status):
    yield args.spec, documents[0]
    return
  exit_handler.add(documents, args.notify or exit_handler.url_of(documents[0]),
                   args.final_status)
  with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, os.path.basename(args.spec))
    with open(path, "w", encoding="utf-8") as f:
      f.write(yaml.safe_dump_all(documents, sort_keys=True))
    yield path, documents[0]


def _vertex(args) -> bool:
  """Whether the command goes to Vertex AI: `--backend`, else the backend
  the spec was compiled for; then aiplatform is set up."""
  from kubeflow.compile.backend import VERTEX, compiled_backend
  args.backend = args.backend or (compiled_backend(args.spec) if getattr(args, "spec", None)
                                  else "kubeflow")
  if args.backend == VERTEX:
    args.project, args.region = google_cloud.connect(args.project, args.region)
  return args.backend == VERTEX


def _submit(args) -> int:
  from kubeflow.api import client  # kfp: when the command runs
  with _spec_file(args) as (path, spec):
    name = spec["pipelineInfo"]["name"]
    params = _params(args, spec, f"python -m commands.kubeflow submit, by {who()}")
    run_name = args.run_name or f"{name}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
    root = run_folders.run_root(args.pipeline_root, spec)
    from commands.kubeflow import doctor  # it reads specs with load_spec, here
    on_vertex = _vertex(args)  # connected first: on Vertex, doctor checks the spec only
    doctor.before_submit(args)
    if on_vertex:
      print(vertex.submit(args, path, run_name, root, params))
      return 0
    run = client.submit(_connect(args), path, name, args.experiment or name, run_name, params,
                        args.namespace, root)
  print(f"run: {run.run_id} ({run_name}) in experiment {args.experiment or name}")
  return 0


def _schedule(args) -> int:
  from kubeflow.api import client  # kfp: when the command runs
  from kubeflow.compile.backend import VERTEX, sent_to
  # A typo fails before any connection, in the form each backend takes.
  on_vertex = sent_to(args.backend, args.spec) == VERTEX
  expression = (schedules.for_vertex if on_vertex else schedules.normalize)(args.cron)
  if args.catchup:
    schedules.check_catchup(on_vertex, "schedule", args.name)
  with _spec_file(args) as (path, spec):
    name = spec["pipelineInfo"]["name"]
    params = _params(args, spec, f"recurring run {args.name} ({args.cron}), "
                                 f"scheduled by {who()}")
    from commands.kubeflow import doctor  # it reads specs with load_spec, here
    on_vertex = _vertex(args)  # connected first, as for submit
    doctor.before_submit(args)
    if on_vertex:
      print(vertex.schedule(args, path, run_folders.run_root(args.pipeline_root, spec),
                            params, expression))
      return 0
    new, replaced = client.schedule(
        _connect(args), path, name, args.experiment or name, args.name, expression,
        params, no_catchup=not args.catchup, namespace=args.namespace,
        pipeline_root=run_folders.run_root(args.pipeline_root, spec))
  print(f"schedule {'updated' if replaced else 'created'}: {args.name} ({new.recurring_run_id}), cron "
        f"{expression!r}, max concurrency 1, "
        f"catch-up {'on' if args.catchup else 'off'}")
  return 0


def _schedules(args) -> int:
  from kubeflow.api import client  # kfp: when the command runs
  if args.catchup:
    schedules.check_catchup(args.backend == "vertex", f"schedules {args.action}", args.name)
  if _vertex(args):
    print("\n".join(vertex.schedules_command(args)))
    return 0
  if not args.experiment:
    raise argparse.ArgumentTypeError("--experiment: expected the schedules' experiment")
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


def _runs(args) -> int:
  from kubeflow.api import client  # kfp: when the command runs
  spec = load_spec(args.spec)[0]
  name = spec["pipelineInfo"]["name"]
  if _vertex(args):
    print("\n".join(vertex.runs_command(args, name)))
    return 0
  kfp_client = _connect(args)
  experiment_id = client.find_experiment(kfp_client, args.experiment or name, args.namespace)
  pipeline_id = multi_user.pipeline_id(kfp_client, name, args.namespace)
  runs = client.recent_runs(kfp_client, experiment_id, pipeline_id, args.limit)
  if not runs:
    print(f"no runs of {name} in experiment {args.experiment or name}")
  namespace = args.namespace or "kubeflow"  # single-user installs run in kubeflow

  @functools.lru_cache(maxsize=None)
  def default_root() -> str:  # asked once, and only for a run that named no root
    return args.pipeline_root or run_folders.namespace_root(namespace)
  for run in runs:
    created = run.created_at.strftime("%Y-%m-%d %H:%M") if run.created_at else "?"
    outcome = run_folders.outcome(run, name, default_root)
    print("\t".join(filter(None, (created, run.state or "?", run.display_name,
                                   run.run_id, outcome))))
  return 0


def _connect(args):
  """kfp's usual sources: --host or $KF_PIPELINES_ENDPOINT; --token or the
  service-account token file that Kubeflow mounts in its pods."""
  from kubeflow.api import client  # kfp: when the command runs
  host = args.host or os.environ.get("KF_PIPELINES_ENDPOINT")
  if not host:
    raise argparse.ArgumentTypeError(
        "--host: expected the Kubeflow Pipelines API endpoint (or "
        "$KF_PIPELINES_ENDPOINT), found neither")
  return client.connect(host, args.namespace, args.token or _token_from_file())


def _token_from_file() -> Optional[str]:
  import kfp.client as kfp_client_env
  path = os.environ.get(kfp_client_env.KF_PIPELINES_SA_TOKEN_ENV,
                        kfp_client_env.KF_PIPELINES_SA_TOKEN_PATH)
  try:
    with open(path, encoding="utf-8") as f:
      return f.read().strip() or None
  except OSError:
    return None


def add_parsers(sub) -> None:
  s = sub.add_parser("submit", help="start one run")
  flags.run(s)
  s.add_argument("--run-name", help="default: PIPELINE-YYYYmmdd-HHMMSS")
  s.set_defaults(func=_submit)
  r = sub.add_parser("schedule", help="create or update a recurring run")
  flags.run(r)
  r.add_argument("--name", required=True, help="the schedule's stable name")
  r.add_argument("--cron", required=True, help="e.g. '0 3 * * *' (5 or 6 fields)")
  r.add_argument("--catchup", action="store_true",
                 help="run missed intervals after a pause (default: no catch-up)")
  r.set_defaults(func=_schedule)
  ru = sub.add_parser("runs", help="a pipeline's recent runs: state, and what each pushed")
  flags.connection(ru)
  ru.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  ru.add_argument("--experiment", help="default: the pipeline's name")
  ru.add_argument("--limit", type=int, default=10, help="how many, newest first (default 10)")
  ru.add_argument("--pipeline-root", help="where runs that named no root wrote (default: "
                  "the namespace's kfp-launcher ConfigMap, read with your kubeconfig, "
                  "as the backend reads it)")
  ru.set_defaults(func=_runs)
  ls = sub.add_parser("schedules", help="list, pause, resume or delete schedules")
  ls.add_argument("action", choices=("list", "pause", "resume", "delete"))
  ls.add_argument("name", nargs="?")
  flags.connection(ls)
  ls.add_argument("--experiment", help="the schedules' experiment (Kubeflow)")
  ls.add_argument("--catchup", action="store_true",
                  help="resume on Vertex AI: also start the runs missed while paused")
  ls.set_defaults(func=_schedules)

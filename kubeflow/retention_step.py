"""Retention of Kubeflow runs: a last step of each run, and a command.

    python -m kubeflow compile ... --keep-runs N      # each run ends with it
    python -m kubeflow retention --spec DIR/pipeline.yaml --keep N [--delete]

The step, `Retention`, runs after RunReport in every run of a pipeline
compiled with `--keep-runs N`, is never cached, and deletes what only runs
older than the newest N used (retention/folders.py says what stays and
why). It writes what it did as a `system.Markdown` artifact, which the run
page shows. The command does the same from any machine that reaches the
bucket, with the compiled spec for the pipeline's root and name, and
dry-runs unless told `--delete`.

Compiling also wires the cache epoch (pipeline/cache_epoch.py) into a
pipeline over spans, with or without `--keep-runs`, so that deleting from
the command is as safe as the step.
"""

import argparse
import copy
import datetime
import json
import sys
from typing import Dict, List, Optional, Set

import startup
import storage
from kubeflow import notify, step_status
from pipeline import cache_epoch

TASK = "Retention"
OUTPUT = "summary"
EPOCH = cache_epoch.PARAMETER  # kubeflow/container.py drops it before TFX sees it
WINDOW_STEP = "SpanWindow"  # the first step over spans (pipeline/window_step.py)


def _cached_root(task: Dict) -> bool:
  """Whether Kubeflow may cache the task and it reads no artifact."""
  return bool(task.get("cachingOptions", {}).get("enableCache")) and \
      not task.get("inputs", {}).get("artifacts")


def _without_epoch(tasks: Dict) -> List[str]:
  """Over spans, the cached steps that read no artifact and take no epoch
  (a spec compiled before the epoch existed)."""
  if WINDOW_STEP not in tasks:
    return []
  return sorted(n for n, t in tasks.items() if _cached_root(t)
                and EPOCH not in t.get("inputs", {}).get("parameters", {}))


def wire_cache_epoch(spec: Dict, tasks: Dict) -> None:
  """Gives every cached step with no input artifact the epoch the window
  step passes on, as a parameter, in place; without that step (no spans),
  nothing."""
  if WINDOW_STEP not in tasks:
    return
  window = spec["components"][tasks[WINDOW_STEP]["componentRef"]["name"]]
  window["outputDefinitions"].setdefault("parameters", {})[EPOCH] = {"parameterType": "STRING"}
  for task in tasks.values():
    if not _cached_root(task):
      continue
    component = spec["components"][task["componentRef"]["name"]]
    component.setdefault("inputDefinitions", {}).setdefault("parameters", {})[EPOCH] = {
        "parameterType": "STRING"}
    task.setdefault("inputs", {}).setdefault("parameters", {})[EPOCH] = {
        "taskOutputParameter": {"producerTask": WINDOW_STEP, "outputParameterKey": EPOCH}}
    task["dependentTasks"] = sorted(set(task.get("dependentTasks", [])) | {WINDOW_STEP})


def never_cached(tasks: Dict) -> List[str]:
  return sorted(t for t, task in tasks.items()
                if not task.get("cachingOptions", {}).get("enableCache"))


def add(spec: Dict, tasks: Dict, keep: int, retry_policy: Optional[Dict]) -> None:
  """Adds the step after RunReport (kubeflow/run_report.py), in place."""
  from kubeflow import run_report
  executors = spec["deploymentSpec"]["executors"]
  report = executors[f"{run_report.TASK}_executor"]["container"]
  container = copy.deepcopy(report)
  container["command"] = ["python", "-m", "kubeflow.retention_step"]
  for variable in container["env"]:
    if variable["name"] == step_status.TASK_ENV:
      variable["value"] = TASK
  executors[f"{TASK}_executor"] = {"container": container}
  serving = spec["root"]["inputDefinitions"]["parameters"].get("serving_dir")
  parameters = {
      "keep": {"runtimeValue": {"constant": str(keep)}},
      "never_cached": {"runtimeValue": {"constant": json.dumps(
          never_cached(tasks) + [TASK, notify.TASK])}},
      "serving_dir": ({"componentInputParameter": "serving_dir"} if serving
                      else {"runtimeValue": {"constant": ""}})}
  spec["components"][TASK] = {
      "executorLabel": f"{TASK}_executor",
      "inputDefinitions": {"parameters": {n: {"parameterType": "STRING"} for n in parameters}},
      "outputDefinitions": {"artifacts": {OUTPUT: {"artifactType": {
          "schemaTitle": "system.Markdown", "schemaVersion": "0.0.1"}}}}}
  tasks[TASK] = {"componentRef": {"name": TASK}, "dependentTasks": [run_report.TASK],
                 "inputs": {"parameters": parameters}, "taskInfo": {"name": TASK},
                 **({"retryPolicy": retry_policy} if retry_policy else {})}


def read_runs(folder: str):
  """Every run folder under `<pipeline root>/<pipeline>` with its records."""
  from retention.folders import Run
  from serving import gfile
  fs, runs = gfile(), []
  if not fs.isdir(folder):
    return runs
  for name in sorted(n.rstrip("/") for n in fs.listdir(folder)):
    if not name.startswith("_") and fs.isdir(f"{folder}/{name}/{step_status.FOLDER}"):
      runs.append(Run(name, f"{folder}/{name}", step_status.read(f"{folder}/{name}")))
  return runs


def apply(folder: str, keep: int, serving_dir: str, never: Set[str], delete: bool,
          current: str = "") -> List[str]:
  """Plans, and with `delete` carries out, retention of the runs under
  `folder`; returns the report's lines."""
  from kubeflow import run_report
  from retention import cli, folders
  runs = read_runs(folder)
  if not runs:  # Vertex AI lays runs out as <root>/<project>/<job>/<task>_<id>/
    return [f"no run folder with step records under {folder}: nothing to keep or delete"]
  found = folders.plan(folder, runs, keep, serving_dir, never, current,
                       history={run_report.TASK, TASK, notify.TASK})
  if not delete:
    return cli.report_lines(found, False) + (
        [f"run(s) in flight: {', '.join(found.in_flight)}"] if found.in_flight else [])

  def in_flight_now():  # again, once the new epoch is written
    now = datetime.datetime.now(datetime.timezone.utc)
    return [r.id for r in read_runs(folder) if r.id != current and r.in_flight(now)]
  deleted, lines = folders.carry_out(folder, found, {r.id: r for r in runs}, in_flight_now)
  listed = cli.report_lines(found, deleted)
  return (listed if deleted else listed[:-1]) + lines  # no "dry run" line


def _command(args) -> int:
  """`python -m kubeflow retention`: the spec names the folder and the steps."""
  from kubeflow import exit_step, run_commands
  spec = run_commands.load_spec(args.spec)[0]
  defaults = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  serving_dir = args.serving_dir or defaults.get("serving_dir", {}).get("defaultValue", "")
  folder = f"{spec['defaultPipelineRoot'].rstrip('/')}/{spec['pipelineInfo']['name']}"
  storage.check([folder, serving_dir])
  tasks = exit_step.tasks(spec)
  unkeyed = _without_epoch(tasks)
  if args.delete and unkeyed:
    raise argparse.ArgumentTypeError(
        f"--spec {args.spec}: expected a spec whose cached first steps take the cache "
        f"epoch, found {', '.join(unkeyed)} without it (compiled before it existed): "
        "compile again, or Kubeflow's cache may hand back what this deletes")
  never = set(never_cached(tasks)) | {TASK, notify.TASK}
  print("\n".join(apply(folder, args.keep, serving_dir, never, args.delete)))
  return 0


def add_parser(sub) -> None:
  from retention.cli import keep_count
  r = sub.add_parser("retention", help="delete what only a pipeline's older runs used "
                                       "(lists it unless --delete)")
  r.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  r.add_argument("--keep", type=keep_count, required=True, metavar="N",
                 help="keep the artifacts of the newest N runs")
  r.add_argument("--delete", action="store_true",
                 help="delete (default: list what would be deleted, and the bytes)")
  r.add_argument("--serving-dir", help="default: the spec's serving_dir")
  r.set_defaults(func=_command)


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  params = executor_input["inputs"]["parameterValues"]
  uri = executor_input["outputs"]["artifacts"][OUTPUT]["artifacts"][0]["uri"]
  folder = cache_epoch.pipeline_folder(uri, TASK)
  storage.enable([uri, params.get("serving_dir", "")])
  lines = apply(folder, int(params["keep"]), params["serving_dir"],
                set(json.loads(params["never_cached"])), delete=True,
                current=step_status.run_id(uri.split(f"/{TASK}/")[0])) if folder else [
                    f"this step's output {uri} lies in no run folder: nothing done"]
  import tensorflow as tf
  with tf.io.gfile.GFile(uri, "w") as f:  # the file at the URI, as the UI reads it
    f.write("## Retention\n\n" + "\n".join(f"    {line}" for line in lines) + "\n")
  print("\n".join(lines))
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv))

"""Retention of Kubeflow runs, as the image runs it: the last step of each
run of a pipeline compiled with `--keep-runs N`, and the planning that
`python -m commands.kubeflow retention` shares with it.

    python -m kubeflow.steps.retention '{{$}}'     (the executor input)

The step, `Retention` (kubeflow/compile/retention_step.py adds it), runs
after RunReport, is never cached, and deletes what only runs older than the
newest N used (store/retention/folders.py says what stays and why). It writes
what it did as a `system.Markdown` artifact, which the run page shows.
"""

import datetime
import json
import os
import sys
from typing import List, Set

from kubeflow.steps import backend, notify, records, report
from runtime import run_layout, startup, storage
from store.retention import cache_epoch

TASK = "Retention"
OUTPUT = "summary"
EPOCH = cache_epoch.PARAMETER  # the step entrypoint drops it before TFX sees it


def read_runs(layout: run_layout.RunFolder):
  """Every run folder of the pipeline under `layout.runs`, with its records.
  On Vertex AI that folder holds every pipeline's runs (the project's): a
  run is this pipeline's when its records say so."""
  from store.retention.folders import Run
  fs, runs = storage.gfile(), []
  if not fs.isdir(layout.runs):
    return runs
  for name in sorted(n.rstrip("/") for n in fs.listdir(layout.runs)):
    folder = f"{layout.runs}/{name}"
    if name.startswith("_") or not fs.isdir(f"{folder}/{records.FOLDER}"):
      continue
    found = records.read(folder)
    named = {r["pipeline"] for r in found.values() if r.get("pipeline")}
    if named <= {layout.pipeline} and (named or layout.backend == run_layout.KUBEFLOW):
      runs.append(Run(name, folder, found))
  return runs


def apply(layout: run_layout.RunFolder, keep: int, serving_dir: str, never: Set[str],
          delete: bool, current: str = "") -> List[str]:
  """Plans, and with `delete` carries out, retention of the pipeline's runs
  under `layout.runs`; returns the report's lines."""
  from store.retention import apply, folders
  runs = read_runs(layout)
  if not runs:
    return [f"no run of {layout.pipeline} with step records under {layout.runs}: "
            "nothing to keep or delete"]
  found = folders.plan(layout, runs, keep, serving_dir, never, current,
                       history={report.TASK, TASK, notify.TASK})
  if not delete:
    return apply.report_lines(found, False) + (
        [f"run(s) in flight: {', '.join(found.in_flight)}"] if found.in_flight else [])

  def in_flight_now():  # again, once the new epoch is written
    now = datetime.datetime.now(datetime.timezone.utc)
    return [r.id for r in read_runs(layout) if r.id != current and r.in_flight(now)]
  deleted, lines = folders.carry_out(layout, found, {r.id: r for r in runs}, in_flight_now)
  listed = apply.report_lines(found, deleted)
  return (listed if deleted else listed[:-1]) + lines  # no "dry run" line


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  refused = backend.refusal(executor_input)
  if refused:
    print(refused, file=sys.stderr)
    return 1
  params = executor_input["inputs"]["parameterValues"]
  uri = executor_input["outputs"]["artifacts"][OUTPUT]["artifacts"][0]["uri"]
  # Specs compiled before the parameter existed name the pipeline in the
  # environment only.
  pipeline = params.get("pipeline_name") or os.environ.get(run_layout.PIPELINE_ENV, "")
  layout = run_layout.locate([uri], pipeline, TASK)
  storage.enable([uri, params.get("serving_dir", "")])
  lines = apply(layout, int(params["keep"]), params["serving_dir"],
                set(json.loads(params["never_cached"])), delete=True,
                current=layout.run_id) if layout else [
                    f"this step's output {uri} lies in no run folder: nothing done"]
  import tensorflow as tf
  with tf.io.gfile.GFile(uri, "w") as f:  # the file at the URI, as the UI reads it
    f.write("## Retention\n\n" + "\n".join(f"    {line}" for line in lines) + "\n")
  print("\n".join(lines))
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv))

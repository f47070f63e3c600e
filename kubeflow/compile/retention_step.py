"""Retention on Kubeflow, at compile time: the `Retention` step after
RunReport (`--keep-runs N`; kubeflow/steps/retention.py runs it), and the
cache epoch wired into every pipeline over spans, with or without it, so
that deleting from `python -m commands.kubeflow retention` is as safe as the step.

The epoch (store/retention/cache_epoch.py): every cached step that reads no
artifact takes, as a parameter, the epoch SpanWindow passes on, so that
raising it makes Kubeflow's cache miss for that window's steps.
"""

import json
from typing import Dict, List, Optional

from kubeflow.compile.spec import add_step, container_of, uncached
from kubeflow.steps import notify, report, retention
from kubeflow.steps.span_window import WINDOW_STEP

EPOCH = retention.EPOCH


def _cached_root(task: Dict) -> bool:
  """Whether Kubeflow may cache the task and it reads no artifact."""
  return bool(task.get("cachingOptions", {}).get("enableCache")) and \
      not task.get("inputs", {}).get("artifacts")


def without_epoch(steps: Dict) -> List[str]:
  """Over spans, the cached steps that read no artifact and take no epoch
  (a spec compiled before the epoch existed)."""
  if WINDOW_STEP not in steps:
    return []
  return sorted(n for n, t in steps.items() if _cached_root(t)
                and EPOCH not in t.get("inputs", {}).get("parameters", {}))


def wire_cache_epoch(spec: Dict, steps: Dict) -> None:
  """Gives every cached step with no input artifact the epoch the window
  step passes on, as a parameter, in place; without that step (no spans),
  nothing."""
  if WINDOW_STEP not in steps:
    return
  window = spec["components"][steps[WINDOW_STEP]["componentRef"]["name"]]
  window["outputDefinitions"].setdefault("parameters", {})[EPOCH] = {"parameterType": "STRING"}
  for task in steps.values():
    if not _cached_root(task):
      continue
    component = spec["components"][task["componentRef"]["name"]]
    component.setdefault("inputDefinitions", {}).setdefault("parameters", {})[EPOCH] = {
        "parameterType": "STRING"}
    task.setdefault("inputs", {}).setdefault("parameters", {})[EPOCH] = {
        "taskOutputParameter": {"producerTask": WINDOW_STEP, "outputParameterKey": EPOCH}}
    task["dependentTasks"] = sorted(set(task.get("dependentTasks", [])) | {WINDOW_STEP})


def history(steps: Dict) -> List[str]:
  """What retention never deletes: the uncached steps' outputs, its own and
  the notice's (each run's own story)."""
  return uncached(steps) + [retention.TASK, notify.TASK]


def add(spec: Dict, steps: Dict, keep: int, retry_policy: Optional[Dict]) -> None:
  """Adds the step after RunReport (kubeflow/compile/report_step.py), in place."""
  serving = spec["root"]["inputDefinitions"]["parameters"].get("serving_dir")
  parameters = {
      "pipeline_name": {"runtimeValue": {"constant": spec["pipelineInfo"]["name"]}},
      "keep": {"runtimeValue": {"constant": str(keep)}},
      "never_cached": {"runtimeValue": {"constant": json.dumps(history(steps))}},
      "serving_dir": ({"componentInputParameter": "serving_dir"} if serving
                      else {"runtimeValue": {"constant": ""}})}
  add_step(spec, steps, retention.TASK, "kubeflow.steps.retention",
           like=container_of(spec, report.TASK), parameters=parameters,
           output=(retention.OUTPUT, "system.Markdown"), depends=[report.TASK],
           retry_policy=retry_policy)

"""`--notify URL`: an exit step added to a compiled pipeline spec.

The spec takes the shape the kfp SDK gives `dsl.ExitHandler`: the pipeline's
steps move into a sub-DAG, `exit-handler-1`, and the `notify` step depends on
it with the trigger strategy ALL_UPSTREAM_TASKS_COMPLETED, so it runs
whether the steps succeeded or failed (the backend's Argo compiler,
`argocompiler/dag.go` depends_exit_handler, since 2.0). It takes no final
status input: before 2.14 the backend cannot resolve one, and it never
carries the error's message; the steps' own records do
(kubeflow/steps/records.py). kubeflow/steps/notify.py is what it runs.

The URL becomes the runtime parameter `notify_url`, so `submit` and
`schedule` can change it, or add the step to a spec compiled without it.
Works on the spec dict alone: no TFX, no TensorFlow.
"""

import argparse
import copy
import urllib.parse
from typing import Dict, List, Optional

from kubeflow.compile.spec import EXIT_DAG, add_step
from kubeflow.steps import notify

URL_PARAM = notify.URL_PARAM
COMPONENT = f"comp-{notify.TASK}"
EXECUTOR = f"exec-{notify.TASK}"


def webhook_url(text: str) -> str:
  """argparse type of `--notify`: an http(s) URL with a host."""
  parts = urllib.parse.urlsplit(text)
  if parts.scheme not in ("http", "https") or not parts.netloc:
    raise argparse.ArgumentTypeError(
        f"--notify: expected a webhook URL (http:// or https://), found {text!r}")
  return text


def add_flag(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--notify", type=webhook_url, metavar="URL",
                      help="post how each run ended to this webhook (Slack-compatible "
                           "JSON), from an exit step that runs whatever happened")


def has_exit_step(spec: Dict) -> bool:
  return notify.TASK in spec["root"]["dag"]["tasks"]


def _step_container(spec: Dict) -> Dict:
  """A compiled step's container, for its image and environment."""
  executors = spec["deploymentSpec"]["executors"]
  return next(e["container"] for label, e in sorted(executors.items()) if label != EXECUTOR)


def add(documents: List[Dict], url: str) -> None:
  """Adds the exit step to [spec, platform config (optional)], in place; for
  a spec that has one, sets its URL's default instead."""
  spec = documents[0]
  params = spec["root"].setdefault("inputDefinitions", {}).setdefault("parameters", {})
  params[URL_PARAM] = {"parameterType": "STRING", "defaultValue": url}
  if has_exit_step(spec):
    return
  root_params = {k: v for k, v in params.items() if k != URL_PARAM}
  steps = spec["root"]["dag"]["tasks"]
  spec["components"][f"comp-{EXIT_DAG}"] = {
      "dag": {"tasks": steps},
      "inputDefinitions": {"parameters": {k: {"parameterType": v["parameterType"]}
                                          for k, v in root_params.items()}}}
  like = _step_container(spec)
  root = {EXIT_DAG: {
      "componentRef": {"name": f"comp-{EXIT_DAG}"},
      "inputs": {"parameters": {k: {"componentInputParameter": k} for k in root_params}},
      "taskInfo": {"name": EXIT_DAG}}}
  add_step(spec, root, notify.TASK, "kubeflow.steps.notify", like=like,
           parameters={URL_PARAM: {"componentInputParameter": URL_PARAM},
                       "pipeline_name": {"runtimeValue": {
                           "constant": spec["pipelineInfo"]["name"]}}},
           output=("message", "system.Artifact"), depends=[EXIT_DAG], recorded=False,
           names=(COMPONENT, EXECUTOR), trigger="ALL_UPSTREAM_TASKS_COMPLETED")
  spec["root"]["dag"]["tasks"] = root
  if len(documents) > 1 and documents[1]:
    _add_platform(documents[1])


def _add_platform(platform: Dict) -> None:
  """The exit step's pod gets the secrets every step gets (the store's
  credentials, the image pull secret), and no node selector."""
  executors = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
  shared: Optional[Dict] = next(iter(executors.values()), None)
  if shared is None:
    return
  kept = {k: copy.deepcopy(v) for k, v in shared.items()
          if k in ("secretAsEnv", "imagePullSecret")}
  if kept:
    executors[EXECUTOR] = kept

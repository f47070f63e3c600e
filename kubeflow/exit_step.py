"""`--notify URL`: an exit step added to a compiled pipeline spec.

The spec takes the shape the kfp SDK gives `dsl.ExitHandler`: the pipeline's
steps move into a sub-DAG, `exit-handler-1`, and the `notify` step depends on
it with the trigger strategy ALL_UPSTREAM_TASKS_COMPLETED, so it runs
whether the steps succeeded or failed (the backend's Argo compiler,
`argocompiler/dag.go` depends_exit_handler, since 2.0). It takes no final
status input: before 2.14 the backend cannot resolve one, and it never
carries the error's message; the steps' own records do
(kubeflow/step_status.py).

The URL becomes the runtime parameter `notify_url`, so `submit` and
`schedule` can change it, or add the step to a spec compiled without it.
Works on the spec dict alone: no TFX, no TensorFlow.
"""

import argparse
import copy
import urllib.parse
from typing import Dict, List, Optional

from kubeflow import notify, step_status

EXIT_DAG = "exit-handler-1"
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


def tasks(spec: Dict) -> Dict:
  """The pipeline's steps, inside the exit handler's DAG if there is one."""
  root = spec["root"]["dag"]["tasks"]
  if EXIT_DAG in root:
    return spec["components"][root[EXIT_DAG]["componentRef"]["name"]]["dag"]["tasks"]
  return root


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
  container = _step_container(spec)
  spec["components"][COMPONENT] = {
      "executorLabel": EXECUTOR,
      "inputDefinitions": {"parameters": {
          URL_PARAM: {"parameterType": "STRING"},
          "pipeline_name": {"parameterType": "STRING"}}},
      "outputDefinitions": {"artifacts": {"message": {"artifactType": {
          "schemaTitle": "system.Artifact", "schemaVersion": "0.0.1"}}}}}
  spec["deploymentSpec"]["executors"][EXECUTOR] = {"container": {
      "image": container["image"],
      "command": ["python", "-m", "kubeflow.notify"],
      "args": ["{{$}}"],
      "env": [e for e in container.get("env", []) if e["name"] not in (
          step_status.PIPELINE_ENV, step_status.TASK_ENV, step_status.RETRIES_ENV)]}}
  spec["root"]["dag"]["tasks"] = {
      EXIT_DAG: {
          "componentRef": {"name": f"comp-{EXIT_DAG}"},
          "inputs": {"parameters": {k: {"componentInputParameter": k} for k in root_params}},
          "taskInfo": {"name": EXIT_DAG}},
      notify.TASK: {
          "componentRef": {"name": COMPONENT},
          "dependentTasks": [EXIT_DAG],
          "inputs": {"parameters": {
              URL_PARAM: {"componentInputParameter": URL_PARAM},
              "pipeline_name": {"runtimeValue": {"constant": spec["pipelineInfo"]["name"]}}}},
          "taskInfo": {"name": notify.TASK},
          "triggerPolicy": {"strategy": "ALL_UPSTREAM_TASKS_COMPLETED"}}}
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

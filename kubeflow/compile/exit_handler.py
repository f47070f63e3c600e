"""`--notify URL`: an exit step added to a compiled pipeline spec.

The spec takes the shape the kfp SDK gives `dsl.ExitHandler`: the pipeline's
steps move into a sub-DAG, `exit-handler-1`, and the `notify` step depends on
it with the trigger strategy ALL_UPSTREAM_TASKS_COMPLETED, so it runs
whether the steps succeeded or failed (the backend's Argo compiler,
`argocompiler/dag.go` depends_exit_handler, since 2.0).
kubeflow/steps/notify.py is what it runs; it reads the steps' own records
(kubeflow/steps/records.py).

With `--final-status` the step also takes the run's state from Kubeflow:
an input of type TASK_FINAL_STATUS fed from the exit handler's DAG, as the
kfp SDK compiles a `dsl.PipelineTaskFinalStatus` argument. Only then, since
an open-source API server before 2.14 refuses to start a run of such a spec
(kubeflow/steps/final_status.py cites both). Not TFX's own exit handler
(`KubeflowV2DagRunner.set_exit_handler`): TFX 1.16 declares a
`FinalStatusStr` input as a STRING (`compiler_utils.build_parameter_type_spec`),
and from 2.14 the driver refuses a struct for a STRING input
(`driver/resolve.go`@2.17.0 line 247, "type mismatch").

The URL becomes the runtime parameter `notify_url`, so `submit` and
`schedule` can change it, or add the step to a spec compiled without it.
Works on the spec dict alone: no TFX, no TensorFlow.
"""

import argparse
import copy
import urllib.parse
from typing import Dict, List, Optional

from kubeflow.compile.spec import EXIT_DAG, add_step
from kubeflow.steps import final_status, notify

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
  parser.add_argument("--final-status", action="store_true",
                      help="with --notify, for Kubeflow Pipelines 2.14 and later: the "
                           "notice takes the run's state from Kubeflow, not from the "
                           "steps' records alone (an older backend refuses to start "
                           "a run of such a spec)")


def has_exit_step(spec: Dict) -> bool:
  # A spec without a root DAG (a hand-cut one) has no exit step: `submit`
  # checks it before the API server judges the rest.
  return notify.TASK in spec.get("root", {}).get("dag", {}).get("tasks", {})


def url_of(spec: Dict) -> str:
  """The webhook URL a spec with the exit step was compiled with."""
  return spec["root"]["inputDefinitions"]["parameters"][URL_PARAM].get("defaultValue", "")


def check_flags(url: Optional[str], final_status: bool, has_step: bool) -> None:
  """Raises argparse.ArgumentTypeError, in one line, for `--final-status`
  with no exit step to take it."""
  if final_status and not (url or has_step):
    raise argparse.ArgumentTypeError(
        "--final-status: expected --notify URL too (or a spec compiled with it): "
        "the final status is the notice's input")


def _step_container(spec: Dict) -> Dict:
  """A compiled step's container, for its image and environment."""
  executors = spec["deploymentSpec"]["executors"]
  return next(e["container"] for label, e in sorted(executors.items()) if label != EXECUTOR)


def add(documents: List[Dict], url: str, kubeflow_state: bool = False) -> None:
  """Adds the exit step to [spec, platform config (optional)], in place; for
  a spec that has one, sets its URL's default instead. With
  `kubeflow_state`, the step takes Kubeflow's final status too."""
  spec = documents[0]
  params = spec["root"].setdefault("inputDefinitions", {}).setdefault("parameters", {})
  params[URL_PARAM] = {"parameterType": "STRING", "defaultValue": url}
  if has_exit_step(spec):
    if kubeflow_state:
      _take_final_status(spec)
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
  if kubeflow_state:
    _take_final_status(spec)
  if len(documents) > 1 and documents[1]:
    _add_platform(documents[1])


def _take_final_status(spec: Dict) -> None:
  """The exit step's final status input, as the kfp SDK compiles it (the
  SDK 2.5 in the lock: `compiler/pipeline_spec_builder.py` lines 357-361 and
  969-972): declared TASK_FINAL_STATUS, optional, fed by `taskFinalStatus`
  from the DAG the step guards. The open-source driver reads the DAG from
  the step's first dependent task (`resolve.go`@2.17.0 lines 464-470),
  which is that DAG."""
  inputs = spec["components"][COMPONENT]["inputDefinitions"]["parameters"]
  inputs[final_status.PARAM] = {"isOptional": True, "parameterType": "TASK_FINAL_STATUS"}
  task = spec["root"]["dag"]["tasks"][notify.TASK]
  task["inputs"]["parameters"][final_status.PARAM] = {
      "taskFinalStatus": {"producerTask": EXIT_DAG}}


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

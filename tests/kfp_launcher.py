"""A STAND-IN for the Kubeflow Pipelines backend: runs a compiled spec's steps here.

No Kubeflow cluster can run on these machines. This does, for each step of
a compiled pipeline spec, what the open-source backend's driver and launcher
do in a pod, and nothing more:

- order the tasks by their dependencies;
- fill the executor input as the driver does: runtime parameter values
  (the spec's defaults, overridden per run), constants, the producing
  steps' output artifacts with the metadata their executors reported, and a
  fresh output URI under the pipeline root for each output artifact;
- create each output artifact's folder, as the launcher does for local paths;
- run the container's exact command and arguments from the spec's
  deploymentSpec, with `{{$}}` replaced by that executor input, in a fresh
  process (`python` is this venv's interpreter: the image's stack);
- read back the executor output file for the next steps.

Like the open-source backend, it runs no `lifecycle.preCacheCheck` hook (TFX
uses one for ImportExampleGen's span driver; only Vertex AI runs it) and no
resolver or importer executors (the open-source backend rejects resolvers;
this pipeline has neither).
"""

import json
import os
import subprocess
import sys
import uuid
from typing import Dict, List


class StepFailed(RuntimeError):
  pass


def task_order(tasks: Dict) -> List[str]:
  """Task names, each after the tasks it depends on."""
  def deps(name):
    found = set(tasks[name].get("dependentTasks", []))
    for a in tasks[name].get("inputs", {}).get("artifacts", {}).values():
      found.add(a["taskOutputArtifact"]["producerTask"])
    return found
  order, left = [], set(tasks)
  while left:
    ready = sorted(n for n in left if deps(n) <= set(order))
    if not ready:
      raise StepFailed(f"dependency cycle among {sorted(left)}")
    order += ready
    left -= set(ready)
  return order


def _parameter(spec_value: Dict, root_params: Dict):
  if "componentInputParameter" in spec_value:
    return root_params[spec_value["componentInputParameter"]]
  return spec_value["runtimeValue"]["constant"]


def run_pipeline_spec(spec: Dict, pipeline_root: str, params: Dict,
                      log_dir: str) -> Dict:
  """Runs every step of `spec`; returns (task, output key) -> runtime artifact.

  Raises:
    StepFailed: naming the step, with the end of its log.
  """
  root_defs = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  root_params = {name: d.get("defaultValue") for name, d in root_defs.items()}
  root_params.update(params)
  run_id = uuid.uuid4().hex[:8]
  tasks = spec["root"]["dag"]["tasks"]
  outputs = {}
  for name in task_order(tasks):
    task = tasks[name]
    component = spec["components"][task["componentRef"]["name"]]
    executor = spec["deploymentSpec"]["executors"][component["executorLabel"]]
    container = executor["container"]  # resolver/importer would raise here
    task_root = os.path.join(pipeline_root, run_id, name)
    executor_input = {
        "inputs": {
            "parameterValues": {k: _parameter(v, root_params) for k, v in
                                task.get("inputs", {}).get("parameters", {}).items()},
            "artifacts": {k: {"artifacts": [outputs[(
                a["taskOutputArtifact"]["producerTask"],
                a["taskOutputArtifact"]["outputArtifactKey"])]]}
                for k, a in task.get("inputs", {}).get("artifacts", {}).items()}},
        "outputs": {
            "artifacts": {k: {"artifacts": [{
                "name": f"{run_id}-{name}-{k}", "type": d["artifactType"],
                "uri": os.path.join(task_root, k), "metadata": {}}]}
                for k, d in component.get("outputDefinitions", {})
                .get("artifacts", {}).items()},
            "outputFile": os.path.join(task_root, "executor_output.json")}}
    # As the launcher's prepareOutputFolders does for local artifact paths.
    for listed in executor_input["outputs"]["artifacts"].values():
      os.makedirs(listed["artifacts"][0]["uri"], exist_ok=True)
    args = [json.dumps(executor_input) if a == "{{$}}" else a for a in container["args"]]
    command = list(container["command"])
    if command[0] == "python":
      command[0] = sys.executable
    # The user's environment, without the Keras choice this test process made.
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    log = os.path.join(log_dir, f"{name}.log")
    with open(log, "w") as f:
      code = subprocess.run(command + args, stdout=f, stderr=subprocess.STDOUT,
                            env=env, timeout=1800).returncode
    if code:
      with open(log) as f:
        raise StepFailed(f"step {name} exited {code}; its log ends:\n{f.read()[-4000:]}")
    with open(executor_input["outputs"]["outputFile"]) as f:
      reported = json.load(f).get("artifacts", {})
    for key, listed in executor_input["outputs"]["artifacts"].items():
      artifact = dict(listed["artifacts"][0])
      if key in reported:
        artifact.update(reported[key]["artifacts"][0])
      outputs[(name, key)] = artifact
  return outputs

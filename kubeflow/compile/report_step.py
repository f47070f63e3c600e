"""The RunReport step, added to a compiled spec after TFX's compiler
(kubeflow/steps/report.py says what it does at run time).

Its inputs are every other step's outputs, so the backend hands it each
artifact's URI and metadata, whether the step ran or was served from the
cache; and the Evaluator's and the Trainer's configuration parameters, as
those steps take them. It runs after all of them, so a run that failed
earlier has no report (the steps' records, the exit step and `python -m
kubeflow runs` tell that run), and it is never cached: its page would show
an earlier run.
"""

import copy
import json
from typing import Dict, Optional

from kubeflow.compile.spec import add_step, container_of, first_step
from kubeflow.steps import report
from store.metadata.run_record import EXEC_PROPERTIES


def add(spec: Dict, steps: Dict, retry_policy: Optional[Dict]) -> None:
  """Adds the report step beside `steps` (the DAG's tasks, which it reads)."""
  artifacts = {}
  for task in steps:
    outputs = spec["components"][steps[task]["componentRef"]["name"]].get(
        "outputDefinitions", {}).get("artifacts", {})
    for key, declared in outputs.items():
      artifacts[f"{task}{report.SEPARATOR}{key}"] = (
          declared["artifactType"],
          {"taskOutputArtifact": {"producerTask": task, "outputArtifactKey": key}})
  parameters = {"pipeline_name": {"runtimeValue": {"constant": spec["pipelineInfo"]["name"]}},
                report.UPSTREAM: {"runtimeValue": {"constant": json.dumps(
                    {t: steps[t].get("dependentTasks", []) for t in steps})}}}
  for node, name in EXEC_PROPERTIES:
    given = steps.get(node, {}).get("inputs", {}).get("parameters", {}).get(name)
    if given:
      parameters[f"{node}{report.SEPARATOR}{name}"] = copy.deepcopy(given)
  add_step(spec, steps, report.TASK, "kubeflow.steps.report",
           like=container_of(spec, first_step(steps)), parameters=parameters,
           artifacts=artifacts, output=(report.OUTPUT, "system.HTML"),
           depends=sorted(steps), retry_policy=retry_policy)

"""kubeflow/compile/spec.py: the one way a step is added to a compiled spec,
as the report, retention and the exit handler's notice use it; and the
steps a spec holds, inside an exit handler or not."""

import copy
import json

from kubeflow.compile import exit_handler, report_step, retention_step, spec
from kubeflow.steps import records


def _spec() -> dict:
  """Two TFX steps as the compiler leaves them, one with resources."""
  env = [{"name": "S3_ENDPOINT", "value": "http://127.0.0.1:9000"},
         {"name": records.PIPELINE_ENV, "value": "digits"},
         {"name": records.TASK_ENV, "value": "Trainer"},
         {"name": records.RETRIES_ENV, "value": "2"}]
  container = {"image": "local/image:1", "command": ["python", "-m", "kubeflow.steps.entrypoint"],
               "env": env, "resources": {"cpuLimit": 4.0}}
  return {
      "pipelineInfo": {"name": "digits"},
      "root": {"dag": {"tasks": {
          "Trainer": {"componentRef": {"name": "Trainer"}, "taskInfo": {"name": "Trainer"}},
          "Pusher": {"componentRef": {"name": "Pusher"}, "dependentTasks": ["Trainer"],
                     "taskInfo": {"name": "Pusher"}}}},
               "inputDefinitions": {"parameters": {
                   "serving_dir": {"parameterType": "STRING"}}}},
      "components": {
          "Trainer": {"executorLabel": "Trainer_executor", "outputDefinitions": {"artifacts": {
              "model": {"artifactType": {"schemaTitle": "tfx.Model"}}}}},
          "Pusher": {"executorLabel": "Pusher_executor"}},
      "deploymentSpec": {"executors": {
          "Trainer_executor": {"container": container},
          "Pusher_executor": {"container": {**copy.deepcopy(container), "resources": {}}}}}}


def test_an_added_step_runs_its_module_in_the_image_with_its_own_record():
  doc = _spec()
  steps = doc["root"]["dag"]["tasks"]
  spec.add_step(doc, steps, "Audit", "kubeflow.steps.audit",
                like=spec.container_of(doc, "Trainer"),
                parameters={"keep": {"runtimeValue": {"constant": "3"}}},
                artifacts={"model": ({"schemaTitle": "tfx.Model"}, {"taskOutputArtifact": {
                    "producerTask": "Trainer", "outputArtifactKey": "model"}})},
                output=("summary", "system.Markdown"), depends=["Pusher"],
                retry_policy=spec.retry_policy(2))
  container = doc["deploymentSpec"]["executors"]["Audit_executor"]["container"]
  assert container["command"] == ["python", "-m", "kubeflow.steps.audit"]
  assert container["args"] == ["{{$}}"] and container["image"] == "local/image:1"
  env = {e["name"]: e["value"] for e in container["env"]}
  assert env[records.TASK_ENV] == "Audit" and env["S3_ENDPOINT"] == "http://127.0.0.1:9000"
  assert container["resources"] == {"cpuLimit": 4.0}
  # The model step's own environment is untouched.
  trainer = spec.container_of(doc, "Trainer")
  assert {e["name"]: e["value"] for e in trainer["env"]}[records.TASK_ENV] == "Trainer"
  component = doc["components"]["Audit"]
  assert component["inputDefinitions"] == {
      "parameters": {"keep": {"parameterType": "STRING"}},
      "artifacts": {"model": {"artifactType": {"schemaTitle": "tfx.Model"}}}}
  assert component["outputDefinitions"]["artifacts"]["summary"]["artifactType"][
      "schemaTitle"] == "system.Markdown"
  task = steps["Audit"]
  assert task["dependentTasks"] == ["Pusher"] and task["retryPolicy"]["maxRetryCount"] == 2
  assert task["inputs"]["artifacts"]["model"]["taskOutputArtifact"]["producerTask"] == "Trainer"


def test_report_retention_and_the_notice_are_each_added_the_one_way():
  doc = _spec()
  steps = doc["root"]["dag"]["tasks"]
  report_step.add(doc, steps, spec.retry_policy(2))
  retention_step.add(doc, steps, 3, None)
  exit_handler.add([doc], "https://hooks.example.com/x")
  executors = doc["deploymentSpec"]["executors"]
  commands = {label: e["container"]["command"][-1] for label, e in executors.items()}
  assert commands == {"Trainer_executor": "kubeflow.steps.entrypoint",
                      "Pusher_executor": "kubeflow.steps.entrypoint",
                      "RunReport_executor": "kubeflow.steps.report",
                      "Retention_executor": "kubeflow.steps.retention",
                      exit_handler.EXECUTOR: "kubeflow.steps.notify"}
  # The steps moved into the exit handler's DAG; the notice runs after it,
  # whatever happened, and writes no step record.
  inside = spec.tasks(doc)
  assert set(inside) == {"Trainer", "Pusher", "RunReport", "Retention"}
  assert inside["RunReport"]["dependentTasks"] == ["Pusher", "Trainer"]
  assert inside["Retention"]["dependentTasks"] == ["RunReport"]
  assert "retryPolicy" not in inside["Retention"]
  notice = doc["root"]["dag"]["tasks"]["notify"]
  assert notice["triggerPolicy"] == {"strategy": "ALL_UPSTREAM_TASKS_COMPLETED"}
  notice_env = {e["name"] for e in executors[exit_handler.EXECUTOR]["container"]["env"]}
  assert notice_env == {"S3_ENDPOINT"}, notice_env
  # What retention keeps for good: the uncached steps (here all: the
  # sketch sets no cache) and the run's own story.
  kept = inside["Retention"]["inputs"]["parameters"]["never_cached"]["runtimeValue"]
  assert set(json.loads(kept["constant"])) == {"Trainer", "Pusher", "RunReport", "Retention", "notify"}

"""kubeflow/compile/exit_handler.py: the exit step, and with `--final-status`
its input of Kubeflow's final status, in the shape the kfp SDK compiles
`dsl.ExitHandler` with a `dsl.PipelineTaskFinalStatus` argument."""

import argparse
import json

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from kubeflow.compile import exit_handler
from tests.unit.kubeflow.compile.test_spec import _spec

URL = "https://hooks.example.com/x"


def _sdk_exit_task(tmp_path) -> tuple:
  """(the exit task, its component) as kfp 2.5's compiler writes them for
  an exit task taking a PipelineTaskFinalStatus."""
  from kfp import compiler, dsl

  @dsl.container_component
  def step():
    return dsl.ContainerSpec(image="python:3.10", command=["true"])

  @dsl.container_component
  def notify(status: dsl.PipelineTaskFinalStatus, url: str):
    return dsl.ContainerSpec(image="python:3.10", command=["echo"], args=[url])

  @dsl.pipeline(name="digits")
  def pipeline(url: str = URL):
    with dsl.ExitHandler(notify(url=url)):
      step()
  compiler.Compiler().compile(pipeline, str(tmp_path / "sdk.yaml"))
  compiled = yaml.safe_load((tmp_path / "sdk.yaml").read_text())
  return compiled["root"]["dag"]["tasks"]["notify"], compiled["components"]["comp-notify"]


def test_the_final_status_input_is_the_one_the_kfp_sdk_compiles(tmp_path):
  doc = _spec()
  exit_handler.add([doc], URL, kubeflow_state=True)
  task = doc["root"]["dag"]["tasks"]["notify"]
  component = doc["components"][exit_handler.COMPONENT]
  sdk_task, sdk_component = _sdk_exit_task(tmp_path)
  assert task["inputs"]["parameters"]["status"] == sdk_task["inputs"]["parameters"]["status"] \
      == {"taskFinalStatus": {"producerTask": "exit-handler-1"}}, task["inputs"]
  assert component["inputDefinitions"]["parameters"]["status"] == \
      sdk_component["inputDefinitions"]["parameters"]["status"], component["inputDefinitions"]
  # What the driver reads (the first dependent task) and the trigger, as the SDK's.
  assert (task["dependentTasks"], task["triggerPolicy"]) == (
      sdk_task["dependentTasks"], sdk_task["triggerPolicy"]), task
  json_format.ParseDict(doc, pipeline_spec_pb2.PipelineSpec())  # a spec the backend parses


def test_a_spec_compiled_with_the_exit_step_takes_the_final_status_when_submitted():
  """`--notify` alone asks for no final status, which an API server before
  2.14 refuses (argocompiler/dag.go@2.5.0 lines 629-630); `submit
  --final-status` on that spec keeps the step and its URL, and adds the input."""
  doc = _spec()
  exit_handler.add([doc], URL)
  assert "taskFinalStatus" not in json.dumps(doc), doc["root"]["dag"]["tasks"]["notify"]
  exit_handler.add([doc], exit_handler.url_of(doc), kubeflow_state=True)
  assert set(doc["root"]["dag"]["tasks"]) == {"exit-handler-1", "notify"}
  assert exit_handler.url_of(doc) == URL
  assert doc["root"]["dag"]["tasks"]["notify"]["inputs"]["parameters"]["status"] == {
      "taskFinalStatus": {"producerTask": "exit-handler-1"}}


@pytest.mark.parametrize("url,has_step,refused", [
    (None, False, True), (URL, False, False), (None, True, False)])
def test_final_status_needs_an_exit_step_to_take_it(url, has_step, refused):
  if not refused:
    exit_handler.check_flags(url, True, has_step)
    return
  with pytest.raises(argparse.ArgumentTypeError) as e:
    exit_handler.check_flags(url, True, has_step)
  assert str(e.value).startswith("--final-status: expected --notify URL too"), str(e.value)

"""The step entrypoint takes input artifacts as either backend hands them over.

The open-source Kubeflow Pipelines backend reads an upstream artifact back
from ML Metadata and hands it over untyped (`instanceSchema: ""`), named by
its MLMD id, with its custom properties as metadata (lists and structs
wrapped, `display_name` and `store_session_info` added). Vertex AI hands it
over typed. Both must give TFX the same artifact. tests/e2e/test_kubeflow_steps.py
runs every step that way; this checks the conversion itself.
"""

import json

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2
from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_entrypoint_utils as tfx_utils
from tfx.types import standard_artifacts

from kubeflow.steps import entrypoint as container
from tests.conftest import compile_digits_spec


@pytest.fixture(scope="module")
def statistics_gen_inputs(tmp_path_factory):
  """StatisticsGen's compiled input definitions."""
  with open(compile_digits_spec(tmp_path_factory.mktemp("compiled"))) as f:
    spec = next(yaml.safe_load_all(f))
  return json_format.ParseDict(spec["components"]["StatisticsGen"]["inputDefinitions"],
                               pipeline_spec_pb2.ComponentInputsSpec())


def examples(kind: dict) -> pipeline_spec_pb2.ExecutorInput:
  """An executor input whose `examples` is an Examples artifact, as the
  backend's toRuntimeArtifact builds it from ML Metadata."""
  return json_format.ParseDict({"inputs": {"artifacts": {"examples": {"artifacts": [{
      "name": "412", "uri": "s3://b/p/ImportExampleGen/ab12/examples", "type": kind,
      "metadata": {"split_names": '["train_span3", "eval_span3"]', "span": 3.0,
                   "version": 0.0, "file_format": "tfrecords_gzip",
                   "display_name": "examples",
                   "store_session_info": '{"Provider": "s3", "Params": {}}',
                   "tfx_version": "1.16.0",
                   "input_fingerprint": {"struct": {"split": "train"}},
                   "split_list": {"list": ["train", "eval"]}}}]}}}},
      pipeline_spec_pb2.ExecutorInput())


def parse(executor_input) -> standard_artifacts.Examples:
  (artifact,) = tfx_utils.parse_raw_artifact_dict(executor_input.inputs.artifacts)["examples"]
  return artifact


def test_tfx_alone_fails_on_the_open_source_backends_untyped_input():
  with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'get'"):
    parse(examples({"instanceSchema": ""}))


@pytest.mark.parametrize("flavour", ["open-source (untyped)", "Vertex AI (typed)"])
def test_both_feedings_give_tfx_the_same_examples(statistics_gen_inputs, flavour):
  declared = json_format.MessageToDict(statistics_gen_inputs.artifacts["examples"].artifact_type)
  executor_input = examples({"instanceSchema": ""} if flavour.startswith("open")
                            else declared)
  container.type_inputs(executor_input, statistics_gen_inputs)
  artifact = parse(executor_input)
  assert isinstance(artifact, standard_artifacts.Examples)
  assert json.loads(artifact.split_names) == ["train_span3", "eval_span3"]
  assert (artifact.span, artifact.version) == (3, 0)
  assert artifact.uri == "s3://b/p/ImportExampleGen/ab12/examples"
  assert artifact.get_json_value_custom_property("split_list") == ["train", "eval"]
  assert artifact.get_json_value_custom_property("input_fingerprint") == {"split": "train"}
  assert not artifact.has_custom_property("display_name")
  assert not artifact.has_custom_property("store_session_info")


def test_an_untyped_input_the_component_does_not_declare_is_named(statistics_gen_inputs):
  executor_input = examples({"instanceSchema": ""})
  executor_input.inputs.artifacts["stats"].CopyFrom(executor_input.inputs.artifacts["examples"])
  with pytest.raises(ValueError, match="input artifact 'stats' arrived without a type"):
    container.type_inputs(executor_input, statistics_gen_inputs)

"""`compile --backend vertex`: files that google-cloud-aiplatform itself
loads, offline. Its loader (utils/yaml_utils.py `_load_yaml_from_local_file`,
line 118 in 1.165.1) is `yaml.safe_load`, which takes one YAML document and
raises ComposerError on two: the open-source backend's spec with a platform
document. The refusals before compiling: tests/unit/kubeflow/compile/test_backend.py."""

import json
import socket

import pytest
import yaml
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform
from google.cloud.aiplatform.utils import yaml_utils
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile.backend import compiled_backend

IMAGE = "registry.example.com/tfrecord-pipeline:1.0-gpu"
T4 = {"type": "NVIDIA_TESLA_T4", "count": "1"}


def compile_to(out, *flags) -> None:
  assert kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/pipelines",
                   "--data-root", "gs://b/data/digits", "--output-dir", str(out),
                   "--skip-data-check", *flags]) == 0


@pytest.fixture(scope="module")
def vertex(tmp_path_factory):
  out = tmp_path_factory.mktemp("vertex")
  compile_to(out, "--backend", "vertex", "--resource",
             "Trainer:cpu=4,memory=16,gpus=1,gpu_type=NVIDIA_TESLA_T4",
             "--notify", "https://hooks.example.com/services/T0/B0", "--keep-runs", "2")
  return out


@pytest.fixture
def offline(monkeypatch):
  """No connection leaves the process: constructing a PipelineJob needs none."""
  def refuse(sock, address):
    raise AssertionError(f"a connection to {address} was tried")
  monkeypatch.setattr(socket.socket, "connect", refuse)


def test_the_spec_is_one_document_that_aiplatforms_loader_reads(vertex):
  spec = yaml_utils.load_yaml(str(vertex / "pipeline.yaml"))
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())  # strictly
  trainer = spec["deploymentSpec"]["executors"]["Trainer_executor"]["container"]
  assert trainer["resources"]["accelerator"] == T4
  assert spec["defaultPipelineRoot"] == "gs://b/pipelines"


@pytest.mark.parametrize("name", ["pipeline.yaml", "pipeline_job.json"])
def test_aiplatform_builds_a_pipeline_job_from_either_file_offline(vertex, offline, name):
  """As `aiplatform.PipelineJob(template_path=...)` takes them. Without
  `credentials` it looks for Application Default Credentials, and, with
  none on the machine, asks the metadata server: construction needs
  credentials, not the network."""
  job = aiplatform.PipelineJob(display_name="digits", template_path=str(vertex / name),
                               pipeline_root="gs://b/r", project="p",
                               location="us-central1", credentials=AnonymousCredentials())
  # What `submit` sends as the request's PipelineJob (pipeline_jobs.py line 514).
  sent = type(job._gca_resource).to_dict(job._gca_resource)
  assert sent["runtime_config"]["gcs_output_directory"] == "gs://b/r"
  executors = sent["pipeline_spec"]["deploymentSpec"]["executors"]
  assert executors["Trainer_executor"]["container"]["resources"]["accelerator"] == T4
  assert "notify" in sent["pipeline_spec"]["root"]["dag"]["tasks"]
  # The spec's own caching choices stay: no blanket enable_caching switch.
  with open(vertex / "pipeline.yaml") as f:
    compiled = yaml.safe_load(f)
  assert sent["pipeline_spec"] == compiled
  assert job.job_id.startswith("digits-")


def test_both_files_say_they_were_compiled_for_vertex(vertex):
  assert compiled_backend(str(vertex / "pipeline.yaml")) == "vertex"
  assert compiled_backend(str(vertex / "pipeline_job.json")) == "vertex"
  with open(vertex / "pipeline.yaml") as f:
    assert f.readline() == "# backend: vertex\n"
  with open(vertex / "pipeline_job.json") as f:
    assert json.load(f)["labels"]["compiled_for"] == "vertex"


def test_the_open_source_backends_spec_is_not_one_aiplatform_loads(tmp_path):
  """Why --backend exists: the default keeps the platform document, which
  the open-source backend reads and aiplatform's loader refuses."""
  compile_to(tmp_path, "--node-selector", "Trainer:pool=gpu")
  with pytest.raises(yaml.composer.ComposerError, match="expected a single document"):
    yaml_utils.load_yaml(str(tmp_path / "pipeline.yaml"))
  assert compiled_backend(str(tmp_path / "pipeline.yaml")) == "kubeflow"
  assert compiled_backend(str(tmp_path / "pipeline_job.json")) == "kubeflow"
  with open(tmp_path / "pipeline_job.json") as f:
    assert "compiled_for" not in json.load(f)["labels"]

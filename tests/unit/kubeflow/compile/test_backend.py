"""kubeflow/compile/backend.py: `compile --backend vertex` refuses, in one
line and with exit status 2, what Vertex AI Pipelines cannot take; GPU types
are named as each backend names them; `compiled_backend` reads which backend
a file was compiled for. Each refusal stops before anything is compiled.
(The compiled files themselves, loaded by aiplatform: tests/pipeline/
test_compile_vertex.py.)"""

import json

import pytest

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile.backend import compiled_backend
from kubeflow.errors import CompileError
from tests.conftest import DIGITS_SCHEMA, digits_raw, write_declaration

IMAGE = "registry.example.com/tfrecord-pipeline:1.0"
VERTEX = "Vertex AI Pipelines"


def compile_for(tmp_path, capsys, *flags, backend=("--backend", "vertex")):
  """(exit status, stderr's lines) of a compile that should stop."""
  given = {"--pipeline-root": "gs://b/r", "--data-root": "gs://b/d"}
  for flag, value in zip(flags[::2], flags[1::2]):
    if flag in given:
      given[flag] = value
  rest = [a for flag, value in zip(flags[::2], flags[1::2]) if flag not in given
          for a in (flag, value)]
  code = kubeflow(["compile", *backend, "--image", IMAGE, "--output-dir",
                   str(tmp_path / "out"), "--skip-data-check",
                   *[a for item in given.items() for a in item], *rest])
  lines = capsys.readouterr().err.strip().splitlines()
  assert not (tmp_path / "out").exists(), "refused, yet something was written"
  return code, lines


REFUSED = [
    (("--pipeline-root", "s3://b/r"),
     f"--pipeline-root s3://b/r: {VERTEX} expects a Cloud Storage URI (gs://BUCKET/PATH), "
     f"found s3://"),
    (("--pipeline-root", "/mnt/pipelines"),
     f"--pipeline-root /mnt/pipelines: {VERTEX} expects a Cloud Storage URI "
     f"(gs://BUCKET/PATH), found a folder"),
    (("--data-root", "s3://b/d"),
     f"--data-root s3://b/d: {VERTEX} expects gs:// (its steps reach Google Cloud as the "
     f"run's service account, with no S3 keys), found s3://"),
    (("--serving-dir", "s3://b/serving"),
     f"--serving-dir s3://b/serving: {VERTEX} expects gs:// (its steps reach Google Cloud "
     f"as the run's service account, with no S3 keys), found s3://"),
    (("--env", "AWS_ACCESS_KEY_ID=AKIA0"),
     f"--env AWS_ACCESS_KEY_ID: {VERTEX} expects no AWS credentials (its steps reach "
     f"Google Cloud as the run's service account, and a spec carries no secret), found "
     f"AWS_ACCESS_KEY_ID"),
    (("--env", "AWS_SESSION_TOKEN=t"), f"--env AWS_SESSION_TOKEN: {VERTEX} expects no AWS"),
    (("--env", "DB_PASSWORD=p"),
     f"--env DB_PASSWORD: expected no credentials in the compiled spec, found a name that "
     f"holds one; {VERTEX} has no Kubernetes secrets"),
    (("--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID"),
     f"--secret-env s3-creds:accesskey=AWS_ACCESS_KEY_ID: {VERTEX} reads no Kubernetes "
     f"platform document, where --secret-env goes; expected none, found 1; Kubernetes "
     f"secrets do not exist there"),
    (("--node-selector", "Trainer:cloud.google.com/gke-accelerator=nvidia-tesla-t4"),
     f"--node-selector Trainer:cloud.google.com/gke-accelerator=nvidia-tesla-t4: {VERTEX} "
     f"reads no Kubernetes platform document, where --node-selector goes; expected none, "
     f"found 1; Vertex picks each step's machine from its --resource NODE:cpu=N,memory=GB,"
     f"gpus=N,gpu_type=NVIDIA_TESLA_T4"),
    (("--toleration", "Trainer:nvidia.com/gpu=present:NoSchedule"),
     f"--toleration Trainer:nvidia.com/gpu=present:NoSchedule: {VERTEX} reads no "
     f"Kubernetes platform document"),
    (("--image-pull-secret", "regcred"),
     f"--image-pull-secret regcred: {VERTEX} reads no Kubernetes platform document, where "
     f"--image-pull-secret goes; expected none, found 1; Vertex pulls the image as its "
     f"service agent: grant it roles/artifactregistry.reader on the repository"),
    (("--train-workers", "2", "--train-engine", "trainjob"),
     f"--train-engine trainjob: {VERTEX} expects --train-engine vertex (a CustomJob; its "
     f"steps reach no Kubernetes API to start a trainjob), found trainjob"),
    (("--train-workers", "2", "--train-engine", "tfjob"),
     f"--train-engine tfjob: {VERTEX} expects --train-engine vertex"),
    (("--data-root", "/home/me/data"),
     f"--data-root /home/me/data: {VERTEX} expects gs:// or /gcs/ (its steps run in "
     f"Google Cloud, not on this machine), found a folder"),
    (("--serving-dir", "runs/serving"),
     f"--serving-dir runs/serving: {VERTEX} expects gs:// or /gcs/"),
    (("--kserve", "digits"),
     f"--kserve digits: {VERTEX} expects no --kserve (KServeDeploy calls a Kubernetes "
     f"API server, which a Vertex step has none of)"),
    (("--pipeline-name", "2026-digits"),
     f"pipeline name '2026-digits': {VERTEX} expects a letter first and at most 113 "
     f"characters (its job id is the name and a 14-digit time, at most 128)"),
    (("--pipeline-name", "d" * 114),
     f"pipeline name '{'d' * 114}': {VERTEX} expects a letter first and at most 113"),
    (("--train-workers", "2", "--train-engine", "vertex", "--train-machine-type",
      "n1-standard-4", "--resource", "Trainer:gpus=1,gpu_type=NVIDIA_L4"),
     "--resource Trainer:gpus=1,gpu_type=NVIDIA_L4: NVIDIA_L4 attaches to g2-* machines "
     "only, found n1-standard-4; use --train-machine-type g2-standard-8"),
    (("--resource", "Trainer:gpus=1"),
     f"--resource Trainer:gpus=1: {VERTEX} expects gpu_type= one of its GPU accelerator "
     f"types (NVIDIA_TESLA_T4, NVIDIA_L4, NVIDIA_TESLA_V100, NVIDIA_TESLA_A100, ...: "
     f"google-cloud-aiplatform's AcceleratorType), found nvidia.com/gpu (the default: "
     f"Kubernetes' name)"),
    (("--resource", "Trainer:gpus=1,gpu_type=NVIDIA_TESLA_T5"),
     f"--resource Trainer:gpus=1,gpu_type=NVIDIA_TESLA_T5: {VERTEX} expects gpu_type= one "
     f"of its GPU accelerator types"),
    (("--resource", "Trainer:gpus=1,gpu_type=TPU_V3"),  # the image is CUDA's
     f"--resource Trainer:gpus=1,gpu_type=TPU_V3: {VERTEX} expects gpu_type= one of its "
     f"GPU accelerator types"),
    (("--resource", "Trainer:gpus=1,gpu_type=NVIDIA_TESLA_K80"),
     "--resource Trainer:gpus=1,gpu_type=NVIDIA_TESLA_K80: NVIDIA_TESLA_K80: Vertex AI no "
     "longer runs it (AcceleratorType: \"Deprecated: Nvidia Tesla K80 GPU has reached end of "
     "support\""),
    (("--train-workers", "2", "--train-engine", "vertex", "--resource",
      "Trainer:gpus=3,gpu_type=NVIDIA_TESLA_T4"),
     "--resource Trainer:gpus=3,gpu_type=NVIDIA_TESLA_T4: 3 x NVIDIA_TESLA_T4: its machines "
     "hold 1, 2, 4 GPUs"),
]


@pytest.mark.parametrize("flags, line", REFUSED, ids=[" ".join(f) for f, _ in REFUSED])
def test_what_vertex_cannot_take_is_one_line_at_compile_time(tmp_path, capsys, flags, line):
  code, err = compile_for(tmp_path, capsys, *flags)
  assert code == 2 and len(err) == 1, err
  assert err[0].startswith(f"error: {line}"), err


def test_an_s3_data_root_from_the_declaration_is_refused_too(tmp_path, capsys):
  raw = digits_raw()
  raw["data"]["root"] = "s3://data/digits"
  raw["schema"] = DIGITS_SCHEMA
  declaration = write_declaration(tmp_path, raw)
  code = kubeflow(["compile", "--backend", "vertex", "--image", IMAGE, "--pipeline-root",
                   "gs://b/r", "--dataset", str(declaration), "--output-dir",
                   str(tmp_path / "out"), "--skip-data-check"])
  err = capsys.readouterr().err.strip().splitlines()
  assert code == 2 and err == [
      f"error: data.root of {declaration} s3://data/digits: {VERTEX} expects gs:// (its "
      f"steps reach Google Cloud as the run's service account, with no S3 keys), found "
      f"s3://"], err


@pytest.mark.parametrize("gpu_type, hint", [
    ("NVIDIA_TESLA_T4", ", Vertex AI's name: compile with --backend vertex, or choose the "
                        "GPU with --node-selector NODE:cloud.google.com/gke-accelerator="
                        "nvidia-tesla-t4"),
    ("gpu", ""),
])
def test_the_open_source_backend_refuses_a_gpu_type_kubernetes_cannot_name(
    tmp_path, capsys, gpu_type, hint):
  """Its driver makes the type the pod's resource name (backend.py cites
  it); Kubernetes refuses one with no domain."""
  code, err = compile_for(tmp_path, capsys, "--resource", f"Trainer:gpus=1,gpu_type={gpu_type}",
                          backend=())
  assert code == 2 and err == [
      f"error: --resource Trainer:gpus=1,gpu_type={gpu_type}: the open-source backend "
      f"expects gpu_type= a Kubernetes resource name such as nvidia.com/gpu, found "
      f"{gpu_type}{hint}"], err


def test_a_customjobs_gpu_is_named_as_vertex_names_it_on_either_backend(tmp_path, capsys):
  """The Trainer step that launches a CustomJob asks for none of its GPUs
  (kubeflow/compile/train_job.py), so Kubernetes' name would reach only
  Vertex, which refuses it after every step before the Trainer ran."""
  code, err = compile_for(tmp_path, capsys, "--train-workers", "2", "--train-engine", "vertex",
                          "--resource", "Trainer:gpus=1,gpu_type=nvidia.com/gpu", backend=())
  assert code == 2 and err[-1].startswith(
      "error: --resource Trainer:gpus=1,gpu_type=nvidia.com/gpu: a Vertex AI CustomJob "
      "expects gpu_type= one of its GPU accelerator types (NVIDIA_TESLA_T4,"), err


def test_the_open_source_backend_still_points_a_credential_to_a_kubernetes_secret(
    tmp_path, capsys):
  code, err = compile_for(tmp_path, capsys, "--env", "AWS_SECRET_ACCESS_KEY=s", backend=())
  assert code == 2 and err[-1] == (
      "error: --env AWS_SECRET_ACCESS_KEY: expected no credentials in the compiled spec, "
      "found a name that holds one; pass it from a Kubernetes secret with --secret-env "
      "SECRET:KEY=AWS_SECRET_ACCESS_KEY"), err


def test_a_backend_that_does_not_exist_is_an_argparse_error(tmp_path, capsys):
  code, err = compile_for(tmp_path, capsys, backend=("--backend", "sagemaker"))
  assert code == 2 and "argument --backend: invalid choice: 'sagemaker'" in err[-1], err


def test_compiled_backend_reads_either_file_and_defaults_to_kubeflow(tmp_path):
  spec = "components: {}\npipelineInfo:\n  name: digits\n"
  files = {"vertex.yaml": "# backend: vertex\n" + spec,
           "kubeflow.yaml": spec + "---\nplatforms:\n  kubernetes: {}\n",
           "vertex.json": json.dumps({"labels": {"compiled_for": "vertex",
                                                 "tfx_runner": "kubeflow_v2"},
                                      "pipelineSpec": {}}),
           "kubeflow.json": json.dumps({"labels": {"tfx_runner": "kubeflow_v2"},
                                        "pipelineSpec": {}})}
  for name, text in files.items():
    (tmp_path / name).write_text(text)
    assert compiled_backend(str(tmp_path / name)) == name.split(".")[0], name
  (tmp_path / "odd.yaml").write_text("# backend: sagemaker\n" + spec)
  with pytest.raises(CompileError, match="expected a backend of kubeflow, vertex, found "
                                         "'sagemaker'"):
    compiled_backend(str(tmp_path / "odd.yaml"))

"""`compile --backend {kubeflow,vertex}`: what each backend cannot take,
refused at compile time in one line, and which backend a spec is for.

`kubeflow` (the default) is the open-source backend: the spec as it always
was, with the Kubernetes platform document when a flag writes one.
`vertex` is Vertex AI Pipelines, which takes the same pipeline spec but runs
each step on Google Cloud, as the run's service account, and reads no
platform document. A spec compiled for Vertex says so in one place per file
(`compiled_backend` reads either):

- `pipeline.yaml` opens with the comment `# backend: vertex`, as kfp's own
  compiler opens its files with comments (`# PIPELINE DEFINITION`,
  kfp/compiler/pipeline_spec_builder.py). The spec's protos have no free
  field (PipelineInfo holds name, display name and description only), and
  an unknown one is refused (the open-source API server's
  `protojson.Unmarshal`, template/v2_template.go@2.5.0 line 186), so the
  record sits beside the spec, not in it.
- `pipeline_job.json` carries the label `compiled_for: vertex`, beside
  TFX's own `tfx_runner` label. aiplatform's PipelineJob does not send a
  template's labels (pipeline_jobs.py `__init__` sends its `labels` argument).

A spec without either is the open-source backend's, as every spec compiled
before `--backend` existed is. Importing this module loads nothing heavy:
`compile --help` and its bad flags stay fast (DEVELOPERS.md, Gotchas).
"""

import argparse
import json
import re
from typing import Dict, List, Optional, Sequence, Tuple

from kubeflow.compile import train_job, vertex_places
from kubeflow.compile.vertex_places import VERTEX_NAME
from kubeflow.errors import CompileError
from pipeline.config import Resources
from trainer.jobs import vertex_machines

KUBEFLOW, VERTEX = "kubeflow", "vertex"
BACKENDS = (KUBEFLOW, VERTEX)
HEADER = "# backend: {}\n"
LABEL = "compiled_for"
# Names that hold credentials: they never go into a compiled spec.
SECRET_WORDS = ("SECRET", "PASSWORD", "TOKEN", "ACCESS_KEY", "CREDENTIAL")
AWS_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
# Each flag that writes only into the Kubernetes platform document
# (platform.py), with what Vertex offers instead. All are refused, none
# ignored: Vertex reads no platform document, so each would silently change
# the run. A node selector or toleration is where a step runs (a GPU pool:
# the step would land on a default machine); a secret as environment is the
# step's credentials (it would run without them); a pull secret means the
# registry wants one, and Vertex pulls as its own service agent, so the run
# would fail at its first step instead of now.
KUBERNETES_ONLY = {
    "node_selector": ("--node-selector", "Vertex picks each step's machine from its "
                      "--resource NODE:cpu=N,memory=GB,gpus=N,gpu_type=NVIDIA_TESLA_T4"),
    "toleration": ("--toleration", "Vertex picks each step's machine from its "
                   "--resource NODE:cpu=N,memory=GB,gpus=N,gpu_type=NVIDIA_TESLA_T4"),
    "image_pull_secret": ("--image-pull-secret", "Vertex pulls the image as its service "
                          "agent: grant it roles/artifactregistry.reader on the repository"),
    "secret_env": ("--secret-env", "Kubernetes secrets do not exist there: steps reach "
                   "Google Cloud as the run's service account"),
}
# Each of those flags' parsed value (platform.py) as the user typed it.
SHOWN = {
    "node_selector": lambda v: f"{v[0]}:{v[1]}={v[2]}",
    "toleration": lambda v: (f"{v[0]}:{v[1]['key']}"
                             f"{'=' + v[1]['value'] if 'value' in v[1] else ''}:{v[1]['effect']}"),
    "image_pull_secret": str,
    "secret_env": lambda v: f"{v[0]}:{v[1]}={v[2]}",
}
# A few of Vertex's accelerator types, to name in a refusal.
SOME_VERTEX_GPUS = ("NVIDIA_TESLA_T4", "NVIDIA_L4", "NVIDIA_TESLA_V100", "NVIDIA_TESLA_A100")


def add_flag(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--backend", choices=BACKENDS, default=KUBEFLOW,
                      help="where the spec runs: the open-source Kubeflow Pipelines "
                           "backend (default), or Vertex AI Pipelines, refusing what "
                           "Vertex cannot take (docs/kubeflow.md, \"Compiling for "
                           "Vertex AI Pipelines\")")


def check_env(env: Dict[str, str], backend: str = KUBEFLOW) -> None:
  """Raises CompileError for an --env variable that holds a credential."""
  for name in env:
    if backend == VERTEX and name in AWS_CREDENTIALS:
      raise CompileError(
          f"--env {name}: {VERTEX_NAME} expects no AWS credentials (its steps reach "
          f"Google Cloud as the run's service account, and a spec carries no "
          f"secret), found {name}")
    if any(word in name.upper() for word in SECRET_WORDS):
      fix = (f"pass it from a Kubernetes secret with --secret-env SECRET:KEY={name}"
             if backend == KUBEFLOW else
             f"{VERTEX_NAME} has no Kubernetes secrets: its steps reach Google Cloud "
             f"as the run's service account")
      raise CompileError(
          f"--env {name}: expected no credentials in the compiled spec, found a "
          f"name that holds one; {fix}")


def check_vertex(args: argparse.Namespace, data_root: str, name: str) -> None:
  """Raises CompileError, one line, for the first flag Vertex cannot take.

  Args:
    args: the parsed `compile` flags.
    data_root: the records' root, --data-root or the declaration's.
    name: the pipeline's name.
  """
  vertex_places.check_name(name)
  from_flag = "--data-root" if args.data_root else f"data.root of {args.dataset}"
  vertex_places.check_location("--pipeline-root", args.pipeline_root)
  for where, uri in ((from_flag, data_root), ("--serving-dir", args.serving_dir or "")):
    if uri:
      vertex_places.check_location(where, uri)
  if getattr(args, "kserve", None):
    raise CompileError(
        f"--kserve {args.kserve}: {VERTEX_NAME} expects no --kserve (KServeDeploy "
        "calls a Kubernetes API server, which a Vertex step has none of); deploy to "
        "a Vertex AI endpoint or compile for the open-source backend")
  check_env(dict(args.env), VERTEX)
  check_kubernetes_only(args)
  # The Trainer step would call a Kubernetes API server; a Vertex step has none.
  if getattr(args, "train_engine", None) in ("trainjob", "tfjob"):
    raise CompileError(
        f"--train-engine {args.train_engine}: {VERTEX_NAME} expects --train-engine "
        f"vertex (a CustomJob; its steps reach no Kubernetes API to start a "
        f"{args.train_engine}), found {args.train_engine}")


def check_kubernetes_only(args: argparse.Namespace) -> None:
  """Raises CompileError for a flag that writes only into the platform document."""
  for field, (flag, instead) in KUBERNETES_ONLY.items():
    given = getattr(args, field, None)
    if given:
      raise CompileError(
          f"{flag} {SHOWN[field](given[0])}: {VERTEX_NAME} reads no Kubernetes "
          f"platform document, where {flag} goes; expected none, found "
          f"{len(given)}; {instead}")


def check_gpus(backend: str, resources: Sequence[Tuple[str, Dict]],
               train_engine: str = "", train_workers: int = 1) -> None:
  """Raises CompileError for a GPU type not named as where it goes names it:
  `backend`, or, for a Trainer whose workers take its GPUs
  (train_job.watches_only), their engine's.

  Args:
    resources: the --resource flags, (NODE, {field: value}).
    train_engine: --train-engine, if given.
    train_workers: --train-workers.
  """
  for node, values in resources:
    if not values.get("gpus"):
      continue
    # A CustomJob's GPU, whichever backend runs the step that launches it.
    customjob = (node == train_job.NODE and train_engine == VERTEX
                 and train_job.watches_only(train_workers, train_engine))
    where = VERTEX if customjob else backend
    gpu_type = values.get("gpu_type", Resources.gpu_type)
    shown = f"--resource {node}:gpus={values['gpus']}" + (
        f",gpu_type={gpu_type}" if "gpu_type" in values else "")
    # Vertex takes its own enum's names (aiplatform_v1 types/accelerator_type.py).
    if where == VERTEX and gpu_type not in vertex_gpu_types():
      default = "" if "gpu_type" in values else " (the default: Kubernetes' name)"
      raise CompileError(
          f"{shown}: {'a Vertex AI CustomJob' if customjob else VERTEX_NAME} expects "
          f"gpu_type= one of its GPU accelerator "
          f"types ({', '.join(SOME_VERTEX_GPUS)}, ...: google-cloud-aiplatform's "
          f"AcceleratorType), found {gpu_type}{default}")
    if where == VERTEX and vertex_machines.refused(gpu_type):
      raise CompileError(f"{shown}: {vertex_machines.refused(gpu_type)}")
    # The open-source driver makes the type the pod's resource name as it is
    # (kubeflow/pipelines backend/src/v2/driver/driver.go@2.5.0 line 587,
    # @2.17.0 line 445: `res.Limits[k8score.ResourceName(acceleratorType)]`),
    # and Kubernetes refuses a container resource name with no domain that
    # is not one of its own (cpu, memory...): "must be a standard resource
    # for containers" (kubernetes pkg/apis/core/validation/validation.go,
    # validateContainerResourceName).
    if where == KUBEFLOW and "/" not in gpu_type:
      vertex = (", Vertex AI's name: compile with --backend vertex, or choose the GPU "
                "with --node-selector NODE:cloud.google.com/gke-accelerator=nvidia-"
                "tesla-t4" if gpu_type in vertex_gpu_types() else "")
      raise CompileError(
          f"{shown}: the open-source backend expects gpu_type= a Kubernetes resource "
          f"name such as nvidia.com/gpu, found {gpu_type}{vertex}")


def vertex_gpu_types() -> List[str]:
  """Vertex's GPU accelerator names, from the installed google-cloud-aiplatform.
  Its TPUs are left out: the image is built for CUDA, and a Trainer given
  `gpus` stops when TensorFlow sees none."""
  # aiplatform's types load here, only to check a GPU (a second's import).
  from google.cloud.aiplatform_v1.types import AcceleratorType
  return [a.name for a in AcceleratorType if a.name.startswith("NVIDIA_")]


def header(backend: str) -> str:
  """What pipeline.yaml opens with: nothing for the open-source backend."""
  return "" if backend == KUBEFLOW else HEADER.format(backend)


def job_labels(backend: str) -> Dict[str, str]:
  """The labels pipeline_job.json adds: none for the open-source backend."""
  return {} if backend == KUBEFLOW else {LABEL: backend}


def sent_to(asked: Optional[str], spec_path: str) -> str:
  """Where `submit` or `schedule` sends a spec: `asked` (--backend), else
  the backend it was compiled for.

  Raises:
    argparse.ArgumentTypeError: --backend vertex with a spec not compiled
      for Vertex: compile never checked its own roots, serving dir,
      --kserve or train engine against what a Vertex step can take.
  """
  compiled = compiled_backend(spec_path)
  if asked == VERTEX and compiled != VERTEX:
    raise argparse.ArgumentTypeError(
        f"--spec {spec_path}: --backend vertex expects a spec compiled for Vertex AI, "
        f"found one compiled for {compiled}: compile it with `compile --backend vertex`")
  return asked or compiled


def compiled_backend(spec_path: str) -> str:
  """The backend a spec was compiled for: `kubeflow` or `vertex`.

  Args:
    spec_path: a local pipeline.yaml or pipeline_job.json written by compile.

  Raises:
    OSError: the file cannot be read.
    CompileError: it names a backend this project does not know.
  """
  with open(spec_path, encoding="utf-8") as f:
    text = f.read()
  found = re.match(HEADER.format(r"(\S+)"), text)
  if found:
    backend = found.group(1)
  else:
    try:
      labels = json.loads(text).get("labels") or {}
    except (ValueError, AttributeError):  # a YAML spec, or no PipelineJob
      labels = {}
    backend = labels.get(LABEL, KUBEFLOW)
  if backend not in BACKENDS:
    raise CompileError(f"{spec_path}: expected a backend of {', '.join(BACKENDS)}, "
                       f"found {backend!r}")
  return backend

"""What each worker of the Trainer's job gets, written into the Trainer step.

With `--train-workers N` (N > 1) the Trainer step launches its workers as a
job (trainer/jobs/). Each worker is given what the Trainer step itself would
get, so `--resource Trainer:gpus=1` means one GPU per worker, and the same
for the Trainer's node selectors and tolerations, the image pull secrets,
`--env` and `--secret-env`. The compiler puts that in the Trainer step's
TRAIN_JOB_POD variable (trainer/jobs/job.py `pod_spec`): it is not part of the
Trainer's configuration, so on the open-source backend where the workers
run is not a cache key; how many there are is (they change the global
batch). Vertex AI's cache key holds a step's environment ("Configure
execution caching"): there a new placement trains again.

On Vertex AI (`--train-engine vertex`) the CustomJob runs in the project
and region, as the service account and on the network, that the flags
below name, else the PipelineJob's own: `wire_vertex_pipeline` hands the
Trainer step Vertex AI Pipelines' placeholders for them (trainer/jobs/vertex.py
`placement` reads them).
"""

import argparse
import dataclasses
import json
from typing import Dict, Optional, Tuple

from kubeflow.errors import CompileError
from pipeline.config import PipelineConfig
from trainer.jobs import CLUSTER_ENGINES, vertex_machines
from trainer.jobs.job import POD_ENV
from trainer.jobs.vertex import PIPELINE_ENV, PROJECT_ENV, REGION_ENVS

NODE = "Trainer"
# With its workers off its own pod (a TrainJob, a TFJob or a CustomJob), the
# Trainer step only launches and watches their job: its own pod asks for a
# core and 2 GB (TensorFlow, TFX's Trainer executor and trainer/jobs/ hold
# 0.8 GB resident once imported; the rest for writing the job's inputs),
# requested, not limited, so it bursts when the node has room; none of the
# workers' GPUs. Given the workers' GPU, it held one more than they use for
# the whole training, and on a pool (or a Vertex quota) of exactly N one
# worker stayed Pending (KFP puts a step's accelerator on its own pod:
# backend/src/v2/driver/driver.go@2.17.0 lines 415-440). Vertex AI sizes a
# step's machine by its limits, so there the step gets its default machine
# (e2-standard-4, "Specify the machine configuration for a pipeline step").
WATCHER_RESOURCES = {"cpuRequest": 1, "memoryRequest": 2}
# The engines whose workers are pods on the step's cluster, placed by the
# Trainer's node selectors and tolerations (a CustomJob takes neither).
POD_ENGINES = ("trainjob", "tfjob")
# Vertex AI Pipelines resolves these in a task's input parameters to its
# PipelineJob's values, the service account to the default one when the job
# names none, the network to "" (kubeflow/pipelines
# components/google-cloud/google_cloud_pipeline_components/_placeholders.py
# lines 18-35 at 7b70c7b; a task argument in `_implementation/llm/
# deployment_graph.py` line 64). The open-source backend leaves them as
# they are (trainer/jobs/vertex.py `_resolved`).
PIPELINE_PLACEHOLDERS = {"project": "{{$.pipeline_google_cloud_project_id}}",
                         "region": "{{$.pipeline_google_cloud_location}}",
                         "serviceAccount": "{{$.pipeline_service_account}}",
                         "network": "{{$.pipeline_network}}"}
# A Kubernetes object's name (DNS-1123 subdomain), as a service account's.
K8S_NAME = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
# TRAIN_JOB_POD key -> (flag, what it takes, the check, its metavar).
VERTEX_FLAGS = {
    "project": ("--train-project", "a project id or number",
                r"[a-z][-a-z0-9.:]*[a-z0-9]|\d+", "PROJECT"),
    "region": ("--train-region", "a region such as us-central1", r"[a-z]+-[a-z]+\d+", "REGION"),
    "serviceAccount": ("--train-service-account", "a service account's email (Vertex) or "
                       "name (TrainJob, TFJob)", r"[^@\s/]+@[^@\s/]+|" + K8S_NAME, "ACCOUNT"),
    # CustomJobSpec.network (aiplatform_v1 types/custom_job.py lines 212-221).
    "network": ("--train-network", "projects/PROJECT_NUMBER/global/networks/NAME",
                r"projects/\d+/global/networks/[a-z]([-a-z0-9]*[a-z0-9])?", "NETWORK")}


def watches_only(workers: int, engine: str) -> bool:
  """Whether the Trainer step only launches and watches its workers' job,
  which then take its GPUs: not on the step's pod (`local` runs them there)."""
  return workers > 1 and engine in CLUSTER_ENGINES


def placed_by_workers(config: PipelineConfig) -> Tuple[str, ...]:
  """The steps whose node selectors and tolerations are their job's workers'
  alone, their own pod staying off the workers' node pool."""
  return (NODE,) if config.train_workers > 1 and config.train_engine in POD_ENGINES else ()


def worker_pod(config: PipelineConfig, image: str, env: Dict[str, str],
               args: Optional[argparse.Namespace]) -> Dict:
  """TRAIN_JOB_POD's value: the Trainer step's pod settings, per worker."""
  resources = config.resources.get(NODE)
  pod = {"image": image, "env": dict(env),
         "resources": dataclasses.asdict(resources) if resources else {}}
  if args is not None:
    pod.update(
        nodeSelector={k: v for node, k, v in args.node_selector if node == NODE},
        tolerations=[t for node, t in args.toleration if node == NODE],
        imagePullSecrets=list(args.image_pull_secret),
        secretEnv=[list(entry) for entry in args.secret_env])
    if getattr(args, "train_timeout", None):
      pod["timeoutSeconds"] = args.train_timeout
    if getattr(args, "train_heartbeat_timeout", None):
      pod["heartbeatTimeoutSeconds"] = args.train_heartbeat_timeout
    if getattr(args, "train_machine_type", None):
      pod["machineType"] = args.train_machine_type
    pod.update(vertex_flags(config, args))
  return {k: v for k, v in pod.items() if v not in ({}, [], None, "")}


def vertex_flags(config: PipelineConfig, args: argparse.Namespace) -> Dict[str, str]:
  """The placement flags given, by TRAIN_JOB_POD key: Vertex's, and for
  TrainJob and TFJob workers `--train-service-account` as the pods'
  `serviceAccountName` (else they run as the step's: trainer/jobs/kube.py
  `with_identity`).

  Raises:
    CompileError: one given for an engine where it would do nothing, or a
      service account of the other kind.
  """
  given = {key: getattr(args, flag[2:].replace("-", "_"), None)
           for key, (flag, *_) in VERTEX_FLAGS.items()}
  given = {key: value for key, value in given.items() if value}
  account, engine = given.get("serviceAccount"), config.train_engine
  if account and engine in POD_ENGINES:
    if "@" in account:
      raise CompileError(f"--train-service-account: expected the name of a Kubernetes service "
                         f"account in the step's namespace for --train-engine {engine}, found "
                         f"the email {account}: bind a Google one to it (Workload Identity)")
    del given["serviceAccount"]
    if not given:
      return {"serviceAccountName": account}
  if given and engine != "vertex":
    flag = VERTEX_FLAGS[next(iter(given))][0]
    raise CompileError(f"{flag}: only for --train-engine vertex, found "
                       f"--train-engine {engine or '(none)'}")
  if account and "@" not in account:
    raise CompileError(f"--train-service-account: expected a service account's email for "
                       f"--train-engine vertex, found {account!r}")
  return given


def check_machine(args: argparse.Namespace) -> None:
  """Raises CompileError when the Vertex workers' GPU cannot go on their
  machine (trainer/jobs/vertex_machines.py): Vertex would refuse the
  CustomJob after every step before the Trainer ran."""
  if getattr(args, "train_engine", None) != "vertex":
    return
  for node, values in args.resource:
    if node != NODE or not values.get("gpus"):
      continue
    shown = ",".join(f"{k}={v}" for k, v in values.items())
    wrong = vertex_machines.check(getattr(args, "train_machine_type", None),
                                  values.get("gpu_type"), values["gpus"])
    if wrong:
      raise CompileError(f"--resource {NODE}:{shown}: {wrong}")


def check_vertex_place(config: PipelineConfig, env: Dict[str, str],
                       args: argparse.Namespace) -> None:
  """Raises CompileError for a Vertex flag given for another engine, or for
  a CustomJob with no project or region: compiled for the open-source
  backend (`--backend kubeflow`), nothing fills in the PipelineJob's, and
  google-auth's project is never taken (trainer/jobs/vertex.py `placement`)."""
  given = vertex_flags(config, args)
  if config.train_engine != "vertex" or getattr(args, "backend", None) != "kubeflow":
    return
  for key, names in (("project", (PROJECT_ENV,)), ("region", REGION_ENVS)):
    if key not in given and not any(env.get(name) for name in names):
      raise CompileError(f"--train-engine vertex on the open-source backend: name the "
                         f"CustomJob's {key} with {VERTEX_FLAGS[key][0]} (or --env "
                         f"{names[0]}=...); only Vertex AI Pipelines names its own")


def wire_vertex_pipeline(spec: Dict, config: PipelineConfig) -> None:
  """Hands the Trainer step, when its workers run on Vertex AI, its
  PipelineJob's project, region, service account and network, in place:
  each an input parameter set to Vertex's placeholder, passed to the step's
  process as a variable (PIPELINE_ENV) by prefixing its command with `env`.

  Not the container's `env`: a variable's value is passed as written, on
  both backends (kfp-pipeline-spec `EnvVar`, pipeline_spec.proto@2.5.0
  lines 803-810; `driver.go`@2.5.0 lines 464-467). The command's
  `{{$.inputs.parameters[...]}}` are filled in on both: by the open-source
  launcher (`launcher_v2.go`@2.5.0 lines 363-376), and on Vertex AI as for
  TFX's own container components, which TFX compiles so
  (tfx 1.16 orchestration/kubeflow/v2/step_builder.py lines 90-126). As
  constants per PipelineJob they keep the Trainer's cache key from run to
  run; a new project, region, account or network is a new key.
  """
  if config.train_workers == 1 or config.train_engine != "vertex":
    return
  task = spec["root"]["dag"]["tasks"][NODE]
  component = spec["components"][task["componentRef"]["name"]]
  container = spec["deploymentSpec"]["executors"][component["executorLabel"]]["container"]
  assignments = []
  for key, placeholder in PIPELINE_PLACEHOLDERS.items():
    name = PIPELINE_ENV[key].lower()
    component.setdefault("inputDefinitions", {}).setdefault("parameters", {})[name] = {
        "parameterType": "STRING"}
    task.setdefault("inputs", {}).setdefault("parameters", {})[name] = {
        "runtimeValue": {"constant": placeholder}}
    assignments.append(f"{PIPELINE_ENV[key]}={{{{$.inputs.parameters['{name}']}}}}")
  container["command"] = ["env", *assignments, *container["command"]]


# Flags that only one engine's workers read: elsewhere they would do nothing.
ENGINE_FLAGS = {"train_heartbeat_timeout": ("--train-heartbeat-timeout", "tfjob"),
                "train_machine_type": ("--train-machine-type", "vertex")}


def check_engine_flags(config: PipelineConfig, args: argparse.Namespace) -> None:
  """Raises CompileError for a flag given where no worker reads it."""
  for name, (flag, engine) in ENGINE_FLAGS.items():
    if getattr(args, name, None) and (config.train_engine != engine
                                      or config.train_workers == 1):
      raise CompileError(f"{flag}: only for --train-workers N (more than 1) on --train-engine "
                         f"{engine}, found {config.train_workers} worker(s) on --train-engine "
                         f"{config.train_engine or '(none)'}")


def step_env(config: PipelineConfig, image: str, env: Dict[str, str],
             args: Optional[argparse.Namespace]) -> Dict[str, str]:
  """The Trainer step's extra environment: {} with one worker."""
  if args is not None:
    check_engine_flags(config, args)
    check_vertex_place(config, env, args)
  if config.train_workers == 1:
    return {}
  return {POD_ENV: json.dumps(worker_pod(config, image, env, args), sort_keys=True)}

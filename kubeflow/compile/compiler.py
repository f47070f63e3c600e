"""Compiles `create_pipeline` for Kubeflow Pipelines v2.

TFX's KubeflowV2DagRunner does the compiling; `_fix_up` mends what it
leaves out, each fix with its reason beside it, and the modules beside this
one add steps to the spec (the run report, retention and the cache epoch,
the exit handler). It writes two files: the pipeline spec as YAML, which
the open-source backend and `kfp.Client` take, followed, when node
selectors, tolerations or secrets were given, by the Kubernetes platform
config as a second YAML document (platform.py); and the PipelineJob JSON,
which Vertex AI Pipelines takes. Compiled for Vertex (backend.py), the YAML
is one document, as aiplatform's loader (`yaml.safe_load`) requires, and
both files record the backend.
"""

import dataclasses
import json
import os
from typing import Dict, List, Optional, Tuple

import yaml
from tfx.dsl.io import fileio
from tfx.orchestration.data_types import RuntimeParameter
from tfx.orchestration.kubeflow.v2.kubeflow_v2_dag_runner import (
  KubeflowV2DagRunner,
  KubeflowV2DagRunnerConfig,
)

from components.tuner.tuner import WORKERS_ENV
from dataset import spans
from kubeflow.compile import backend as backends
from kubeflow.compile import exit_handler, platform, report_step, retention_step, train_job
from kubeflow.compile.backend import check_env
from kubeflow.compile.spec import DEFAULT_RETRIES, retry_policy, tasks
from kubeflow.errors import CompileError
from kubeflow.steps import records as step_records
from kubeflow.steps.span_window import WINDOW_STEP, SpanWindow
from pipeline.config import PipelineConfig, Resources
from pipeline.inputs import unresolved_inputs
from pipeline.pipeline import create_pipeline

SPEC_FILE = "pipeline.yaml"
JOB_FILE = "pipeline_job.json"
# Kubeflow's rule for pipeline names (TFX's own error message garbles it).
NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"
NEVER_CACHED = ("ImportExampleGen", "BaselineModel")
# Every TFX step runs this: the Keras choice, then TFX's executor.
ENTRYPOINT = ["python", "-m", "kubeflow.steps.entrypoint"]


def check_name(name: str) -> None:
  if not (name and len(name) <= 128 and set(name) <= set(NAME_CHARS)
          and name[0] != "-"):
    raise CompileError(
        f"pipeline name: expected lower-case letters, digits and '-' (not "
        f"first), at most 128, as Kubeflow requires; found {name!r} "
        f"(set --pipeline-name)")


def resource_spec(r: Resources) -> Dict:
  """A PipelineContainerSpec.ResourceSpec, as JSON."""
  spec = {}
  if r.cpu:
    spec.update(cpuLimit=r.cpu, cpuRequest=r.cpu)
  if r.memory_gb:
    spec.update(memoryLimit=r.memory_gb, memoryRequest=r.memory_gb)
  if r.gpus:
    spec["accelerator"] = {"type": r.gpu_type, "count": str(r.gpus)}
  return spec


def _fix_up(spec: Dict, config: PipelineConfig, defaults: Dict,
            env: Dict[str, str], retries: int = DEFAULT_RETRIES,
            trainer_env: Optional[Dict[str, str]] = None) -> None:
  """Mends what TFX's compiler leaves out of a pipelineSpec dict, in place."""
  # Runtime parameters get their defaults: TFX writes none into the spec.
  for name, value in defaults.items():
    spec["root"]["inputDefinitions"]["parameters"][name]["defaultValue"] = value
  steps = spec["root"]["dag"]["tasks"]
  executors = spec["deploymentSpec"]["executors"]
  # Each step's CPU, memory and GPUs; TFX's compiler drops ImportExampleGen's.
  # A Trainer that only watches its workers gets none of theirs (train_job.py).
  watches = train_job.watches_only(config.train_workers, config.train_engine)
  for node, resources in config.resources.items():
    label = spec["components"][node]["executorLabel"]
    executors[label]["container"]["resources"] = (
        dict(train_job.WATCHER_RESOURCES) if node == train_job.NODE and watches
        else resource_spec(resources))
  for node in uncached_steps(config):
    steps[node].pop("cachingOptions", None)
  # One preempted pod should not fail the whole run (docs/kubeflow.md,
  # "Retries"); the steps are written to be run again so.
  for task in steps.values() if retries else ():
    task["retryPolicy"] = retry_policy(retries)
  # An output parameter read by a later step names its producer as TFX
  # spells it, `<task>_task`, a task that does not exist ("producer task ...
  # not in tasks", the backend's driver/resolve.go): it names the task.
  for task in steps.values():
    for value in task.get("inputs", {}).get("parameters", {}).values():
      producer = value.get("taskOutputParameter", {})
      if producer.get("producerTask", "").removesuffix("_task") in steps:
        producer["producerTask"] = producer["producerTask"].removesuffix("_task")
  # Every container gets `--env` (no secret: those come from Kubernetes
  # secrets, platform.py) and its pipeline's and task's names, for its
  # record (kubeflow/steps/records.py); and KFP's own switch for code that
  # runs inside a step (`_KFP_RUNTIME`, which KFP sets in its lightweight
  # components' containers): `kfp` then skips importing its compiler, its
  # API client and the Kubernetes client, which no step uses (844 modules
  # fewer in each step's start: docs/performance.md, "Start-up").
  for node in steps:
    named = {**env, step_records.PIPELINE_ENV: config.pipeline_name,
             step_records.TASK_ENV: node, step_records.RETRIES_ENV: str(retries),
             step_records.KFP_RUNTIME_ENV: "true"}
    if node == "Tuner":  # outside the cache key (components/tuner/tuner.py)
      named[WORKERS_ENV] = str(config.tune_workers)
    if node == train_job.NODE:  # what its job's workers get (train_job.py)
      named.update(trainer_env or {})
    executors[spec["components"][node]["executorLabel"]]["container"]["env"] = [
        {"name": k, "value": v} for k, v in sorted(named.items())]
  spec["defaultPipelineRoot"] = config.pipeline_root


# Beam options that already tell the workers where TFX comes from.
DEPENDENCY_FLAGS = ("--sdk_container_image", "--worker_harness_container_image",
                    "--extra_package", "--setup_file", "--requirements_file")


def beam_args_for_image(beam_args, image: str) -> list:
  """The Beam arguments, with the step's own image as the SDK workers' on a
  distributed runner (Dataflow, Flink, Spark): it holds TFX and this
  project, and declares the Keras choice (kubeflow/Dockerfile). TFX then
  builds no sdist of itself for them in every Beam step."""
  beam_args = list(beam_args)
  if not beam_args or any(a.split("=")[0] in DEPENDENCY_FLAGS for a in beam_args):
    return beam_args
  return beam_args + [f"--sdk_container_image={image}"]


def uncached_steps(config: PipelineConfig) -> Tuple[str, ...]:
  """The steps Kubeflow must always run. With spans, only SpanWindow:
  ImportExampleGen reads immutable spans named by its values, and
  BaselineModel copies the version named by `served_version`. Without,
  ImportExampleGen's cache key holds the data's location but not the files'
  content (TFX's driver that fingerprints them runs only on Vertex AI), so
  new files in the same place would otherwise go unseen; and the model
  served is not known when the pipeline is compiled."""
  # KServeDeploy names the serving dir's newest version, which a rollback
  # or another run's push changes with no input of the step's changing.
  deploy = ("KServeDeploy",) if config.kserve else ()
  if spans.has_spans(config.declaration.data):
    return (WINDOW_STEP,) + deploy
  # Without spans, nothing chose the Tuner's search when the run started:
  # the step looks for the latest one when it runs (components/tuner/tuner.py).
  return NEVER_CACHED + (("Tuner",) if config.declaration.tuning else ()) + deploy


def runtime_defaults(pipeline) -> Dict:
  """Runtime parameter name -> its default, from the pipeline's components."""
  defaults = {}
  for component in pipeline.components:
    for value in component.exec_properties.values():
      if isinstance(value, RuntimeParameter):
        defaults[value.name] = value.default
  return defaults


def executor_labels(spec: Dict) -> Dict[str, str]:
  """Component id -> its executor's label in a pipelineSpec dict."""
  return {node: spec["components"][node]["executorLabel"]
          for node in tasks(spec)}


def compile_pipeline(config: PipelineConfig, image: str, output_dir: str,
                     env: Optional[Dict[str, str]] = None,
                     platform_args=None, notify: Optional[str] = None,
                     final_status: bool = False, retries: int = DEFAULT_RETRIES,
                     keep_runs: Optional[int] = None,
                     backend: str = backends.KUBEFLOW) -> Tuple[str, str]:
  """Compiles the pipeline for `config` to run in containers of `image`.

  Args:
    config: the pipeline's configuration; its runtime_parameters must be on.
    image: the container image, REGISTRY/NAME:TAG, built from
      kubeflow/Dockerfile.
    output_dir: where the two files go (a folder or a URI).
    env: environment variables for every container (no secrets).
    platform_args: parsed kubeflow/compile/platform.py flags, or None.
    notify: a webhook URL for the exit step, or None for no exit step.
    final_status: the exit step takes Kubeflow's final status (2.14+).
    retries: how many times a failed step's pod is started again (0: never).
    keep_runs: with N, each run ends deleting what only older runs used.
    backend: `kubeflow` or `vertex` (backend.py): for Vertex, no platform
      document, and the files say which.

  Returns:
    (pipeline spec YAML path, PipelineJob JSON path).

  Raises:
    CompileError: for a name Kubeflow does not accept, a secret in `env`,
      or, for Vertex, a flag of the platform document.
  """
  check_name(config.pipeline_name)
  check_env(env or {}, backend)
  if backend == backends.VERTEX and platform_args is not None:
    backends.check_kubernetes_only(platform_args)
  config = dataclasses.replace(config, beam_args=beam_args_for_image(config.beam_args, image))
  # Compiling opens nothing: each run resolves its inputs (submit, or the step).
  pipeline = create_pipeline(config, unresolved_inputs(config), window_step=SpanWindow)
  runner = KubeflowV2DagRunner(
      config=KubeflowV2DagRunnerConfig(
          default_image=image, default_commands=ENTRYPOINT,
          use_pipeline_spec_2_1=True))
  job = runner.run(pipeline, write_out=False)
  defaults = runtime_defaults(pipeline)
  _fix_up(job["pipelineSpec"], config, defaults, env or {}, retries,
          train_job.step_env(config, image, env or {}, platform_args))
  train_job.wire_vertex_pipeline(job["pipelineSpec"], config)
  steps = job["pipelineSpec"]["root"]["dag"]["tasks"]
  retention_step.wire_cache_epoch(job["pipelineSpec"], steps)
  report_step.add(job["pipelineSpec"], steps, retry_policy(retries))
  if keep_runs:
    retention_step.add(job["pipelineSpec"], steps, keep_runs, retry_policy(retries))
  job["runtimeConfig"]["parameterValues"] = defaults
  documents = [job["pipelineSpec"]]
  if platform_args is not None and backend == backends.KUBEFLOW:
    documents.append(platform.platform_spec(
        platform_args, executor_labels(job["pipelineSpec"]),
        placed_by_workers=train_job.placed_by_workers(config)))
  if notify:
    exit_handler.add(documents, notify, final_status)
    job["runtimeConfig"]["parameterValues"][exit_handler.URL_PARAM] = notify
  return write_files(output_dir, documents, job, backend)


def write_files(output_dir: str, documents: List[Dict], job: Dict,
                backend: str) -> Tuple[str, str]:
  """Writes [spec, platform document (optional)] and the PipelineJob, each
  saying which backend it is for (backend.py); returns their paths."""
  fileio.makedirs(output_dir)
  spec_path = os.path.join(output_dir, SPEC_FILE)
  job_path = os.path.join(output_dir, JOB_FILE)
  if backends.job_labels(backend):
    job.setdefault("labels", {}).update(backends.job_labels(backend))
  with fileio.open(spec_path, "w") as f:
    f.write(backends.header(backend)
            + yaml.safe_dump_all([d for d in documents if d], sort_keys=True))
  with fileio.open(job_path, "w") as f:
    f.write(json.dumps(job, indent=2, sort_keys=True))
  return spec_path, job_path

"""A STAND-IN for how Vertex AI Pipelines feeds a compiled spec's container
steps: kfp_backend.Backend's DAG, cache and retries, through its hooks, with
what Vertex does in place of the open-source driver and launcher.

Read against google-cloud-aiplatform 1.165.1 (the v1 API's types, whose
docstrings are the REST reference), kfp 2.5.0, tfx 1.16.0 and Vertex AI's
public docs. Each rule, and where it comes from:

- The layout: a task's folder is `<root>/<project number>/<job id>/<task>_<task id>/`
  (tfx `orchestration/kubeflow/v2/container/kubeflow_v2_run_executor.py`
  lines 83-84: "{pipelineJob.runtimeConfig.gcsOutputDirectory}/{project_number}
  /{pipeline_job_user_id}/{task_name}_{task_uuid}/executor_output.json"; the
  v1 API's own words, `aiplatform_v1/types/pipeline_job.py` lines 174-182,
  give only "{job_id}/{task_id}/{output_key}", no project number), each
  output artifact at `<folder>/<key>`, the executor output file
  `<folder>/executor_output.json`.
- What a step is handed: artifact URIs as they are (gs://), and the executor
  output file as a path of the Cloud Storage FUSE mount, `/gcs/<bucket>/...`:
  KFP's own executor writes it with os.makedirs and open() (kfp
  `dsl/executor.py` lines 43-47, 296-298, "using gcsfuse" at 285), and maps
  only an artifact's `.path` to /gcs/ (`dsl/types/artifact_types.py` lines
  20, 86-87); TFX's reads and writes it with fileio (kubeflow_v2_run_executor.py
  lines 85-89, 176-177). Vertex's docs: data "mounted into your components
  using Cloud Storage FUSE" ("Migrate from Kubeflow Pipelines", Storage).
  The output parameters' files lie in the same folder, `<folder>/<key>`: not
  documented, inferred (KFP's executor makes and opens them as local paths,
  `dsl/executor.py` lines 142-145).
- No launcher in the step's container: nothing is downloaded into it or
  uploaded from it, no `executor-logs` output; what the step writes under
  the mount is in the bucket when it ends (this mount is write-through only:
  a step sees under it only what it wrote itself).
- Artifacts: typed, the consumer's declared type; named
  `projects/<number>/locations/<region>/metadataStores/default/artifacts/<id>`,
  the outputs too, before the step runs (tfx
  `orchestration/kubeflow/v2/container/testdata/executor_invocation.json`);
  the metadata a Struct as the step reported it, with nothing added.
- Output parameters: the executor output's `parameterValues`, else the
  parameter's file.
- The cache key ("Configure execution caching"): the input parameters'
  values and input artifacts' IDs, the output parameters' and artifacts'
  names, the image, command, args and environment in order; "only the
  pipelines with the same pipeline name will share the cache". Per task, as
  its `cachingOptions` say (aiplatform's `enable_caching` rewrites them in the
  spec before it is sent, `pipeline_jobs.py` lines 283-284).
- Retries ("Configure retries for a pipeline task"): every failed attempt,
  up to `maxRetryCount`, after `backoffDuration` (default 0s) times
  `backoffFactor` (default 2.0) to the attempt's power, each wait at most
  `backoffMaxDuration` (default 3600s); the same task folder (not
  documented). Nothing counts from the first attempt's start.
- Failure policy ("Configure failure policy"; `PipelineFailurePolicy`): slow
  by default, every task that can run runs; fast, none starts after a
  failure. A task whose trigger strategy is ALL_UPSTREAM_TASKS_COMPLETED (the
  exit handler's) runs either way.
- Placeholders in args: `{{$}}`, KFP's `{{$.pipeline_job_name}}`,
  `..._resource_name`, `..._uuid`, `{{$.pipeline_task_name}}`, `..._uuid`,
  `{{$.pipeline_root}}`, `{{$.outputs.output_file}}` (kfp `dsl/__init__.py`
  lines 69-166), and Google Cloud Pipeline Components'
  `{{$.pipeline_google_cloud_project_id}}` and `..._location` ("set at
  pipeline runtime", kubeflow/pipelines
  `components/google-cloud/google_cloud_pipeline_components/_placeholders.py`).
  The job uuid is given the job id (Vertex's own is not known here); the
  create and schedule time placeholders are not resolved.
- Cancelling: the running step's process is killed; no task starts after.

THE ONE SUBSTITUTION (see tests/fakes/vertex_pipelines.py): gs:// is handed
to steps as s3:// on the S3 stand-in, and so the mount `/gcs/` as `/s3/`,
which KFP maps back to s3:// as it maps /gcs/ to gs://
(`dsl/types/artifact_types.py` lines 22, 104-105). As kfp_backend does with
the open-source launcher's local paths, the mount is the step's own folder
here (`<pod>/s3/<bucket>/...`), copied into the bucket when the step ends.
"""

import dataclasses
import datetime
import json
import os
import random
import threading
from typing import Dict, List, Optional

from ml_metadata.proto import metadata_store_pb2 as mlmd

from tests.fakes.kfp_backend import Backend, Run, StepFailed, _seconds

MOUNT = "/s3/"  # Vertex's /gcs/, under the substitution


def now() -> str:
  """RFC 3339, as the API writes times."""
  return datetime.datetime.now(datetime.timezone.utc).isoformat(
      timespec="microseconds").replace("+00:00", "Z")


def mounted(uri: str) -> str:
  """The path of an s3:// URI in the step's mount."""
  return MOUNT + uri[len("s3://"):]


@dataclasses.dataclass
class TaskDetail:
  """A container task as the job's `jobDetail.taskDetails` describes it."""
  task_id: str
  state: str = "RUNNING"  # PipelineTaskDetail.State
  start_time: str = dataclasses.field(default_factory=now)
  end_time: str = ""
  main_job: str = ""  # the CustomJob of the last attempt
  failed_jobs: List[str] = dataclasses.field(default_factory=list)
  waits: List[float] = dataclasses.field(default_factory=list)  # backoff before each retry, s
  execution: Optional[int] = None  # MLMD execution id
  outputs: Dict[str, dict] = dataclasses.field(default_factory=dict)  # key -> runtime artifact
  error: str = ""


@dataclasses.dataclass
class JobRun:
  """What one job's run needs and what it leaves."""
  job_id: str
  resource_name: str  # projects/<number>/locations/<region>/pipelineJobs/<id>
  root: str  # the job's root, substituted
  env: Dict[str, str]  # the platform's part of each step's environment
  service_account: str = ""  # the job's, else the project's default
  network: str = ""  # the job's, or none
  cancelled: threading.Event = dataclasses.field(default_factory=threading.Event)
  tasks: Dict[str, TaskDetail] = dataclasses.field(default_factory=dict)
  result: Optional[Run] = None  # the Backend's record: every task's state


class VertexBackend(Backend):
  """One project's region: its metadata store and its cache. `run_job` runs
  a job; one at a time."""

  def __init__(self, home: str, s3, project: str, number: str, region: str):
    super().__init__(home, s3, flavour="typed", version=(2, 17), publish_logs=False)
    # No Argo: a task is retried by its own retryPolicy alone, none without.
    self.default_retries = 0
    self.project, self.number, self.region = project, number, region
    self.metadata: Dict[int, dict] = {}  # artifact id -> its metadata, as reported
    self.backoff_scale = 1.0  # a test may shorten the waits; their lengths are kept
    self.job: Optional[JobRun] = None
    self.lock = threading.Lock()  # the job's task details, read while it runs

  def run_job(self, job: JobRun, spec_path: str, params: Dict, log_dir: str,
              fail_fast: bool) -> Run:
    """Raises StepFailed as Backend.run does; `job.result` is the run either way."""
    self.job, self.fail_fast = job, fail_fast
    try:
      job.result = self.run(spec_path, params, image=None, log_dir=log_dir,
                            run_id=job.job_id, pipeline_root=job.root)
      return job.result
    except StepFailed as e:
      job.result = e.run
      raise

  def artifact_name(self, artifact_id: int) -> str:
    return (f"projects/{self.number}/locations/{self.region}/metadataStores/default/"
            f"artifacts/{artifact_id}")

  def _run_root(self, spec, pipeline_root, run_id) -> str:
    self.pipeline_name = spec["pipelineInfo"]["name"]  # the cache's scope
    return f"{pipeline_root.rstrip('/')}/{self.number}/{run_id}"

  def _run_task(self, spec, name, task, component, scope, done, run_root, executors,
                image, log_dir, result, retries: int = 0) -> int:
    detail = TaskDetail(task_id=str(random.getrandbits(62)))
    self.task = name  # tasks run one at a time
    with self.lock:
      self.job.tasks[name] = detail
    try:
      execution = super()._run_task(spec, name, task, component, scope, done, run_root,
                                    executors, image, log_dir, result, retries)
    except StepFailed as e:
      with self.lock:
        detail.state = "CANCELLED" if self.job.cancelled.is_set() else "FAILED"
        detail.error, detail.end_time = str(e).splitlines()[0], now()
      raise
    outputs = {key: self._runtime(art, {"schemaTitle": self._title(art)})
               for key, art in self._outputs_of(execution).items()}
    with self.lock:
      # PipelineTaskDetail.State: SKIPPED "due to cache hit" (pipeline_job.py line 501).
      detail.state = "SKIPPED" if result.states[name] == "CACHED" else "SUCCEEDED"
      detail.execution, detail.outputs, detail.end_time = execution, outputs, now()
    return execution

  def _executor_input(self, task, component, scope, done, run_root, name) -> Dict:
    inputs = self._inputs(task, component, scope, done, name)  # typed: Vertex's feeding
    folder = f"{run_root}/{name}_{self.job.tasks[name].task_id}"
    outputs = {}
    for key, d in component.get("outputDefinitions", {}).get("artifacts", {}).items():
      pending = {"type": d["artifactType"], "uri": f"{folder}/{key}", "metadata": {}}
      artifact_id = super()._record_artifact(key, pending)  # named before the step runs
      outputs[key] = {"artifacts": [{**pending, "name": self.artifact_name(artifact_id),
                                     "metadata": d.get("metadata", {})}]}
    declared_params = component.get("outputDefinitions", {}).get("parameters", {})
    return {"inputs": inputs,
            "outputs": {"artifacts": outputs,
                        "parameters": {key: {"outputFile": mounted(f"{folder}/{key}")}
                                       for key in declared_params},
                        "outputFile": mounted(f"{folder}/executor_output.json")}}

  def _runtime(self, art: mlmd.Artifact, kind: Dict) -> Dict:
    return {"name": self.artifact_name(art.id), "uri": art.uri, "type": kind,
            "metadata": self.metadata.get(art.id, {})}

  def _title(self, art: mlmd.Artifact) -> str:
    [kind] = self.store.get_artifact_types_by_id([art.type_id])
    return kind.name

  def _record_artifact(self, key: str, artifact: Dict) -> int:
    """The output the step reported, into the artifact named for it."""
    artifact_id = int(artifact["name"].rsplit("/", 1)[1])
    [art] = self.store.get_artifacts_by_id([artifact_id])
    art.uri = artifact["uri"]
    self.store.put_artifacts([art])
    self.metadata[artifact_id] = artifact.get("metadata", {})
    return artifact_id

  def _fingerprint(self, executor_input: Dict, container: Dict) -> str:
    key = {"pipeline": self.pipeline_name,
           "parameters": executor_input["inputs"]["parameterValues"],
           "artifacts": {k: [a["name"] for a in v["artifacts"]]
                         for k, v in executor_input["inputs"]["artifacts"].items()},
           "outputParameters": sorted(executor_input["outputs"].get("parameters", {})),
           "outputArtifacts": sorted(executor_input["outputs"]["artifacts"]),
           "container": [container["image"], container["command"], container["args"],
                         container.get("env", [])]}
    return json.dumps(key, sort_keys=True)

  def _retry(self, failed: StepFailed, task: Dict, attempt: int, first: float) -> bool:
    policy = task.get("retryPolicy", {})
    wait = min(_seconds(policy.get("backoffDuration", "0s")) *
               policy.get("backoffFactor", 2.0) ** attempt,
               _seconds(policy.get("backoffMaxDuration", "3600s")))
    with self.lock:
      self.job.tasks[self.task].waits.append(wait)
    return not self.job.cancelled.wait(wait * self.backoff_scale)

  def _execute(self, name, executor_input, container, pod, log_dir, kill=None):
    if self.job.cancelled.is_set():
      raise StepFailed(f"step {name} cancelled before it started")
    attempt = (f"projects/{self.number}/locations/{self.region}/customJobs/"
               f"{random.getrandbits(62)}")
    with self.lock:
      self.job.tasks[name].main_job = attempt
    try:
      return super()._execute(name, executor_input, container, pod, log_dir,
                              kill=kill or (lambda _: self.job.cancelled.is_set()))
    except StepFailed:
      with self.lock:
        self.job.tasks[name].failed_jobs.append(attempt)
      raise

  def _stage(self, executor_input: Dict, pod_dir: str, bucket=None) -> None:
    """No launcher: the step reads and writes the URIs itself."""

  def _upload_outputs(self, outputs: Dict, reported: Dict, pod_dir: str, bucket=None) -> None:
    """No launcher uploads: what the step wrote under the mount reaches the
    bucket through `_after_step`."""

  def _pipeline_values(self, name: str) -> Dict[str, str]:
    """Vertex's run-time placeholders (google_cloud_pipeline_components
    `_placeholders.py` lines 18-35 @7b70c7b: the service account is the
    job's, else the default one; the network the job's, else "")."""
    return {
        "{{$.pipeline_job_name}}": self.job.job_id,
        "{{$.pipeline_job_resource_name}}": self.job.resource_name,
        "{{$.pipeline_job_uuid}}": self.job.job_id,
        "{{$.pipeline_task_name}}": name,
        "{{$.pipeline_task_uuid}}": getattr(self.job.tasks.get(name), "task_id", ""),
        "{{$.pipeline_root}}": self.job.root,
        "{{$.pipeline_google_cloud_project_id}}": self.project,
        "{{$.pipeline_google_cloud_location}}": self.region,
        "{{$.pipeline_service_account}}": self.job.service_account,
        "{{$.pipeline_network}}": self.job.network}

  def _fill(self, text: str, name: str) -> str:
    for placeholder, value in self._pipeline_values(name).items():
      text = text.replace(placeholder, value)
    return text

  def _parameter(self, value, scope, done, name):
    """A task's constant may be a placeholder (Google's own components pass
    PROJECT_ID_PLACEHOLDER so, `_implementation/llm/deployment_graph.py`
    line 64): Vertex fills it before the task starts."""
    found = super()._parameter(value, scope, done, name)
    return self._fill(found, name) if isinstance(found, str) else found

  def _args(self, args: List[str], local_input: Dict, name: str) -> List[str]:
    """The command or args: the run's placeholders, then `{{$}}` and the
    input parameters' as the open-source launcher fills them (TFX compiles
    `{{$.inputs.parameters[...]}}` into a command for Vertex too,
    tfx/orchestration/kubeflow/v2/step_builder.py lines 90-126)."""
    output_file = local_input["outputs"]["outputFile"]
    return Backend._args([a if a == "{{$}}" else self._fill(a, name).replace(
        "{{$.outputs.output_file}}", output_file) for a in args], local_input, name)

  def _platform_env(self, name: str) -> Dict[str, str]:
    return dict(self.job.env)

  def _after_step(self, pod_dir: str) -> None:
    """What the step wrote under the mount, into the bucket."""
    mount = os.path.join(pod_dir, MOUNT.strip("/"))
    for folder, _, files in os.walk(mount):
      for file in files:
        path = os.path.join(folder, file)
        bucket, _, key = os.path.relpath(path, mount).partition(os.sep)
        self.s3.upload_file(path, bucket, key.replace(os.sep, "/"))

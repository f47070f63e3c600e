"""A STAND-IN for the open-source Kubeflow Pipelines backend: runs a compiled
spec's steps on this machine, fed as the backend feeds them.

No Kubeflow cluster can run here. This does, for each task of a compiled
pipeline spec, what the backend's driver and launcher do (kubeflow/pipelines
`backend/src/v2`, read at 2.5.0 and 2.17.0), with a real ML Metadata store,
and nothing kinder. Each behaviour, and where it comes from:

- Input artifacts from upstream tasks are read back from ML Metadata
  (`metadata/client.go` GetOutputArtifactsByExecutionId) and converted by
  `OutputArtifact.ToRuntimeArtifact` / `converter.go` toRuntimeArtifact:
  the name is the MLMD id, the metadata is the properties and custom
  properties (ints and doubles as numbers, structs as structs), and the
  type is `{instanceSchema: ""}` ("TODO(Bobgy): figure out how to get
  schema"). The `typed` flavour gives the consumer's declared type instead,
  as Vertex AI does; the compiled-steps test runs the open-source one.
- The run's pipeline root (`driver/root_dag.go`@2.17.0 lines 97-113,
  `driver/driver.go`@2.5.0 lines 152-171): the run's own
  (`runtime_config.pipeline_root`), else the `defaultPipelineRoot` of the
  namespace's `kfp-launcher` ConfigMap (`config/env.go` FromConfigMap,
  DefaultPipelineRoot), else `minio://mlpipeline/v2/artifacts`. Never the
  spec's `defaultPipelineRoot`: only the UI copies that into a run.
- Outputs (`driver/driver.go` provisionOutputs): URI
  `<pipeline root>/<pipeline name>/<run id>/<task>/<salt>/<key>`
  (GenerateOutputURI under the run context's `pipeline_root`,
  `metadata/client.go` GetPipeline), the type and metadata from the
  component's outputDefinitions; output parameters' files at
  `/tmp/kfp/outputs/<key>`. By version:
  - from 2.5, with logs published (the driver's `--publish_logs` defaults
    to "true", `cmd/driver/main.go`@2.5.0 line 85, and the API server's
    manifests set PUBLISH_LOGS "true"): one more output, `executor-logs`,
    of type `{schemaTitle: system.Artifact}` (`driver.go`@2.5.0 line 2031,
    @2.17.0 line 761), into which the launcher tees the container's output
    (`launcher_v2.go` getLogWriter) and which it uploads as one object;
  - before 2.15: no name; the executor output file at the pod's
    `/tmp/kfp_outputs/output_metadata.json`; before 2.16 a failed
    container uploads and records nothing (`launcher_v2.go`@2.5.0
    executeV2 returns first);
  - 2.15: each output named by its key (`driver.go`@2.15.0, #12256; line
    783 at 2.17.0); the executor output file under the task root's local
    path, `/s3/<...>/<task>/<uuid>/output_metadata.json` (lines 802-807 at
    2.17.0; TFX takes its task root, `.temp` and unique id from that
    folder);
  - 2.16: a failed container's log is uploaded (and recorded, which this
    does not model: it records no failed execution), nothing else
    (`launcher_v2.go`@2.16.0 executeV2, #12877; line 789 at 2.17.0);
  - 2.16.1: the launcher appends the retry index to the log's URI,
    `executor-logs-0` (qualifyExecutorLogsURI, `launcher_v2.go`@2.17.0
    lines 531-554), and keeps the log's URI whatever the executor output
    says of it (line 804).
- The root DAG driver parses the run's root and the ConfigMap's
  `providers` into the run's store session before any step
  (tests/fakes/kfp_launcher_providers.py): a root of no known scheme (a
  local folder) or providers it cannot read fail the run there.
- The launcher (`component/launcher_v2.go`): LocalPathForURI maps gs://,
  minio:// and s3:// to `/gcs/`, `/minio/`, `/s3/` in the pod;
  downloadArtifacts copies every input artifact's objects into the pod
  (objectstore DownloadBlob: a `dir/` marker object becomes a file that
  later blocks its folder; before 2.17 every key the listing of the URI's
  key gives, a sibling `model_run/...` beside `model` included, from 2.17
  only the URI's own); prepareOutputFolders; the container's command and
  args with `{{$}}` replaced by the executor input; mergeRuntimeArtifacts of
  the executor output (URI, metadata); uploadOutputArtifacts of every
  output: its URI must lie under the run's root, and whatever the pod's
  local path holds is uploaded (the log; an output a step wrote under
  `/s3/`); downloads and uploads go through
  the bucket the launcher opens from the run's session: the namespace's
  `kfp-launcher` ConfigMap's `providers` and a Secret, else AWS's
  defaults, which reach nothing here (tests/fakes/kfp_launcher_store.py,
  its rules cited at 2.5.0, 2.15.0 and 2.17.0); RecordArtifact: metadata to custom properties
  by StructValueToMLMDValue (numbers as doubles, bools as ints, lists and
  structs wrapped), the type from the schema title, and `display_name` and
  `store_session_info` added.
- Output parameters (`launcher_v2.go` collectOutputParameters, then
  `metadata/client.go` PublishExecution): the executor output's
  `parameterValues`, stored on the execution as the custom property
  `outputs`. A later task's `taskOutputParameter` reads them from the
  producer's execution (`driver/resolve.go` resolveUpstreamParameters),
  and fails with "producer task, X, not in tasks" for a name that is no
  task of the DAG.
- The cache (`driver/cache.go` getFingerPrint, `cacheutils/cache.go`
  GenerateCacheKey and GenerateFingerPrint): for a task with caching
  enabled, the SHA-256 of the input artifact names (MLMD ids), the input
  parameter values, the output artifacts' specs without URIs, the output
  parameter types, and the image with the command and args. A hit records
  a CACHED execution with the earlier outputs, artifacts and parameters,
  and runs nothing.
- Sub-DAGs and the exit handler (`argocompiler/dag.go`): a task whose
  component is a DAG runs its tasks with the task's inputs as the DAG's
  parameters; a task downstream of a failure is skipped, unless its
  trigger strategy is ALL_UPSTREAM_TASKS_COMPLETED (depends_exit_handler).
- The final status (`taskFinalStatus`, an exit task's input of type
  TASK_FINAL_STATUS; `final_status` below): before 2.14 the API server
  refuses to create a run of a spec that has one (`argocompiler/dag.go`
  @2.5.0 lines 629-630, when CreateRun compiles the workflow,
  `template/v2_template.go`@2.5.0 line 315); from 2.14 the driver feeds
  the state ML Metadata last knew of the task's first dependent task, the
  DAG, with an empty error (`driver/resolve.go`@2.14.0 lines 412-447,
  @2.17.0 lines 458-493), and refuses it for an input declared other than
  STRUCT or TASK_FINAL_STATUS (line 226 at 2.14.0, 247 at 2.17.0). A DAG's
  state changes only when a launcher ends in it (UpdateDAGExecutionsState,
  `component/launcher_v2.go`@2.14.0 line 189, @2.17.0 line 227; a cache
  hit is published by the driver, `driver/container.go`@2.17.0 line 234,
  and updates nothing): COMPLETE when every task completed or came from
  the cache, FAILED once one failed, else RUNNING as its driver made it
  (`metadata/client.go`@2.14.0 lines 707-748, @2.17.0 lines 800-878). A
  launcher publishes FAILED for any failure it returns, after the
  program's end too (an upload: `launcher_v2.go`@2.17.0 lines 187-229);
  a killed pod's launcher publishes nothing, so its task stays RUNNING.
- The pod: an empty working directory, so only what the image installs can
  import; the environment is the container's `env` from the spec and the
  Kubernetes platform config's secrets (`driver.go` extendPodSpecPatch),
  nothing inherited but PATH. The image is this venv's interpreter.

- Retries (`argocompiler/container.go`@2.17.0 lines 582-588 and 667-685,
  @2.5.0 lines 520-552): a task's `retryPolicy` becomes its template's Argo
  `retryStrategy`, `limit` and `backoff` only, no `retryPolicy`. A failed
  executor pod is started again, up to `maxRetryCount` times, with the same
  executor input, so the same output URIs, and whatever the failed attempt
  left in the bucket, when Argo's rules allow (argo-workflows
  `workflow/controller/operator.go`@v4.0.5, the version 2.17.0 pins;
  @v3.5.14 for 2.5.0):
  - the policy: OnFailure when none is set (`workflow_types.go`
    RetryPolicyActual, v4.0.5 lines 2295-2304), retrying a Failed node, not
    an Error; but 2.17.0's manifests give every template
    `retryPolicy: OnError` (`manifests/kustomize/third-party/argo/base/
    workflow-controller-configmap-patch.yaml`@2.17.0 lines 50-59,
    templateDefaults), retrying an Error, not a Failed node. `retry_policy`
    chooses; the default follows the version;
  - what a pod's end is (operator.go@v4.0.5): a container that exits
    non-zero, or is killed in place, or a node that shuts down gracefully
    for a preemption ("Pod was terminated in response to imminent node
    shutdown"), is Failed; a pod deleted before Argo saw it end (a node
    gone, a drain) is Error "pod deleted" (line 1289). `kills` chooses;
  - the deadline: `backoff.maxDuration` counts from the first attempt's
    start (lines 1026-1041): an attempt failing later is not retried. At
    2.17.0 a task compiled without a max duration gets "0" (container.go
    line 410), so none of its failures is retried;
  - a task compiled without a `retryPolicy` has no `retryStrategy` of its
    own, so from 2.17.0 it takes the manifests' templateDefaults whole
    (workflow-controller-configmap-patch.yaml@2.17.0 lines 56-59): `limit`
    2 under the install's policy, no backoff, so no deadline. Before
    2.17.0 the manifests set none: such a task is never retried.
  From 2.14 this holds inside the exit handler's sub-DAG too; before, only
  root-DAG tasks retry (kubeflow/pipelines#11908): `version` chooses. The
  backoff between attempts is not waited here.
- Hardened pods (2.16 drops every capability; an admin may force a user
  id, `argocompiler/security_context.go`): with `user`, each step runs as
  that uid and gid with no capabilities at all (`setpriv`), in a working
  directory and HOME it cannot write; its /tmp and its output paths are its
  own, as in a pod whose launcher ran as the same user.

With `cluster` (tests/fakes/standin_cluster.py), each run is an Argo
Workflow in the stand-in Kubernetes API and each step's pod is registered
there, owned by it, as Argo's pods are; the step reaches the API as its
service account would, through a KUBECONFIG here (KFP_POD_NAME is its
pod's name, HOSTNAME that name cut to 63 characters). The Trainer's launcher (trainer/jobs/) needs both.

To test retries, `kills` names tasks whose first attempt is killed (SIGKILL
to its process group) once a predicate of the executor input holds, polled
every 50 ms: as a pod deleted with its node (Error), or, given as
(predicate, "shutdown"), as a node's graceful shutdown (Failed).

Like the backend, it runs no resolver or importer, and no
`lifecycle.preCacheCheck` hook.

tests/fakes/vertex_feeding.py feeds the same DAG, cache and retries as
Vertex AI Pipelines does, through hooks whose defaults here are the
behaviour above: `_run_root`, `_retry`, `_stage`, `_upload_outputs`, `_args`,
`_platform_env`, `_after_step`, `fail_fast`, and the spec's own image when
`image` is None.
"""

import atexit
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Callable, Dict, List, Optional

import yaml
from google.protobuf import json_format
from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd

from tests.fakes import kfp_launcher_providers, kfp_launcher_store, standin_cluster
from tests.fakes.kfp_launcher_providers import DriverPanic, StoreError, q

LOCAL_PREFIX = {"gs://": "gcs", "minio://": "minio", "s3://": "s3"}
# config/env.go@2.17.0 line 38 (line 37 at 2.5.0): the root of a run that
# names none, in a namespace whose kfp-launcher ConfigMap sets none.
DEFAULT_ROOT = "minio://mlpipeline/v2/artifacts"
LOGS = "executor-logs"  # driver.go provisionOutputs
INPUT_PARAMETER = re.compile(r"\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}")


class StepFailed(RuntimeError):
  run = None  # the Run so far, once the exit task has run
  phase = "Failed"  # Argo's node phase: Failed, or Error for a pod deleted
  # What ML Metadata keeps of the task: FAILED as its launcher published
  # it, RUNNING for a pod killed before, None when its driver failed first.
  mlmd_state: Optional[str] = "FAILED"


class RunRefused(StepFailed):
  """The API server refused to create the run: nothing ran."""


FINAL_STATUS_FROM = (2, 14)  # kubeflow/pipelines#11953


def final_status_tasks(spec: Dict) -> List[str]:
  """The tasks, in any DAG of the spec, fed a final status."""
  dags = [spec["root"]["dag"]] + [c["dag"] for c in spec["components"].values() if "dag" in c]
  return sorted(name for dag in dags for name, task in dag["tasks"].items()
                if any("taskFinalStatus" in p
                       for p in task.get("inputs", {}).get("parameters", {}).values()))


def dag_state(children: Dict[str, Optional[str]], total: int) -> Optional[str]:
  """UpdateDAGExecutionsState: the DAG's new state from its tasks' states in
  ML Metadata, or None to leave it as it is (metadata/client.go@2.14.0
  lines 707-748, @2.17.0 lines 800-878)."""
  states = list(children.values())
  if sum(s in ("COMPLETE", "CACHED", "CANCELED") for s in states) == total:
    return "COMPLETE"
  return "FAILED" if "FAILED" in states else None


def final_status(state: str, run_name: str, task: str) -> Dict:
  """The PipelineTaskFinalStatus the driver feeds, as protojson writes it
  (resolve.go@2.17.0 lines 471-476: "TODO: Implement fields "Message and
  "Code"" leaves `error` empty)."""
  return {"state": state, "pipelineJobResourceName": run_name,
          "pipelineTaskName": task, "error": {}}


def task_order(tasks: Dict) -> List[str]:
  """Task names, each after the tasks it depends on."""
  def deps(name):
    found = set(tasks[name].get("dependentTasks", []))
    for a in tasks[name].get("inputs", {}).get("artifacts", {}).values():
      found.add(a["taskOutputArtifact"]["producerTask"])
    for p in tasks[name].get("inputs", {}).get("parameters", {}).values():
      if "taskOutputParameter" in p:
        found.add(p["taskOutputParameter"]["producerTask"])
    return found
  order, left = [], set(tasks)
  while left:
    ready = sorted(n for n in left if deps(n) <= set(order))
    if not ready:
      raise StepFailed(f"dependency cycle among {sorted(left)}")
    order += ready
    left -= set(ready)
  return order


@dataclasses.dataclass
class Run:
  states: Dict[str, str]  # task -> EXECUTED or CACHED
  outputs: Dict[tuple, dict]  # (task, key) -> runtime artifact, as recorded
  pods: Dict[str, dict]  # task -> what the platform config put on its pod
  parameters: Dict[str, dict] = dataclasses.field(default_factory=dict)  # task -> outputs
  attempts: Dict[str, int] = dataclasses.field(default_factory=dict)  # task -> pods started


def load_spec(path: str):
  """(pipeline spec, platform spec or {}) from a compiled YAML file."""
  with open(path, encoding="utf-8") as f:
    docs = [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if d]
  return docs[0], (docs[1] if len(docs) > 1 else {})


def _local_path(uri: str, pod: str) -> str:
  """LocalPathForURI, inside this pod's file system."""
  for prefix, mount in LOCAL_PREFIX.items():
    if uri.startswith(prefix):
      return os.path.join(pod, mount, uri[len(prefix):])
  raise StepFailed(f"failed to generate local storage path for artifact URI "
                   f"{uri}: unsupported storage scheme (launcher_v2.go LocalPathForURI)")


def _to_mlmd_value(value) -> mlmd.Value:
  """StructValueToMLMDValue."""
  out = mlmd.Value()
  if isinstance(value, bool):
    out.int_value = int(value)
  elif isinstance(value, (int, float)):
    out.double_value = float(value)
  elif isinstance(value, str):
    out.string_value = value
  elif isinstance(value, list):
    out.struct_value.update({"list": value})
  else:
    out.struct_value.update({"struct": value})
  return out


def _from_mlmd_value(value: mlmd.Value):
  """toRuntimeArtifact's propertiesToMetadata."""
  kind = value.WhichOneof("value")
  if kind == "struct_value":
    return json_format.MessageToDict(value.struct_value)
  return float(getattr(value, kind)) if kind in ("int_value", "double_value") \
      else value.string_value


class Backend:
  """One Kubeflow installation: its ML Metadata, its cache, its secrets."""

  def __init__(self, home: str, s3, flavour: str = "oss",
               secrets: Optional[Dict[str, Dict[str, str]]] = None,
               version=(2, 17), user: Optional[int] = None,
               kills: Optional[Dict[str, Callable[[Dict], bool]]] = None,
               cluster=None, publish_logs: bool = True,
               launcher_config: Optional[Dict[str, str]] = None,
               retry_policy: Optional[str] = None,
               namespace: str = kfp_launcher_store.NAMESPACE):
    """
    Args:
      home: where its ML Metadata store goes.
      s3: the test's boto3 S3 client, or None. The launcher never uses it:
        it opens the bucket from the kfp-launcher ConfigMap's `providers`
        and the namespace's Secrets (kfp_launcher_providers.py,
        kfp_launcher_store.py), so a test
        applies the ConfigMap compile wrote (Vertex's feeding uploads
        through it, vertex_feeding.py).
      flavour: `oss` (untyped inputs) or `typed` (Vertex AI's feeding).
      secrets: the namespace's Kubernetes Secrets by name: key -> value
        (with `cluster`, its store's secrets win): the steps' secret env,
        and the launcher's credentials by `secretRef`.
      version: the backend's (major, minor), 2.4 to 2.17: the log output
        from 2.5, sub-DAG tasks retry from 2.14, named outputs, the output
        file under the task root and the log's retry suffix at 2.17.
      user: run every step as this uid (and gid), without capabilities; it
        needs this process to be root (else steps run as this user).
      kills: task -> a predicate of its executor input; the first attempt
        is killed when it holds.
      cluster: a StandInCluster the steps' pods belong to, or None.
      publish_logs: the API server's PUBLISH_LOGS (from 2.5; "true" in
        its manifests).
      launcher_config: the data of the namespace's `kfp-launcher` ConfigMap
        (with `cluster`, the ConfigMap in its API wins): its
        `defaultPipelineRoot`, and its `providers`, the launcher's only way
        to an S3-compatible store (kfp_launcher_providers.py).
      retry_policy: Argo's, as the install's workflow-controller ConfigMap
        sets it: OnFailure, OnError or Always (default: the version's).
      namespace: the runs' namespace (without `cluster`): a multi-user
        install's profile namespace, whose Secrets `secrets` are.
    """
    self.home, self.s3, self.flavour = home, s3, flavour
    self.secrets = secrets or {}
    self.version, self.kills = tuple(version), dict(kills or {})
    # The API server's setting, which a test may change between runs; each
    # run takes it when it starts (the server compiles the run's workflow
    # then: `argocompiler/container.go`@2.17.0 lines 238-239).
    self.publish_logs = publish_logs
    self._publishing = False
    self.retry_policy = retry_policy or ("OnError" if self.version >= (2, 17) else "OnFailure")
    # The templateDefaults' limit, for a task without a retryPolicy (above).
    self.default_retries = 2 if self.version >= (2, 17) else 0
    self.launcher_config = dict(launcher_config or {})
    self.namespace = namespace
    # The run's store session (run() sets them, as the root driver does).
    self._session: Dict = {}
    self._root_bucket = self._launcher_root = ""
    self.user = user if user is not None and os.geteuid() == 0 else None
    os.makedirs(home, exist_ok=True)
    # The pods' folders, reachable by `user` (a test's tmp_path is not).
    self.pods = tempfile.mkdtemp(prefix="kfp-pods-")
    os.chmod(self.pods, 0o755)
    self.image = shared_pod_image() if self.user is not None else None
    config = mlmd.ConnectionConfig()
    config.sqlite.filename_uri = os.path.join(home, "mlmd.sqlite")
    config.sqlite.connection_mode = 3
    self.store = metadata_store.MetadataStore(config)
    self.cache: Dict[str, int] = {}  # fingerprint -> MLMD execution id
    self.fail_fast = False  # skip every task not started after a failure (Vertex's policy)
    self.cluster, self.workflow = cluster, None
    if cluster is not None:  # readable by the steps' user
      self.kubeconfig = os.path.join(self.pods, "kubeconfig")
      shutil.copy(cluster.kubeconfig, self.kubeconfig)
      os.chmod(self.kubeconfig, 0o644)

  def close(self) -> None:
    """Deletes the pods' folders (about 4 GB): a test's tmp_path is kept,
    this folder is not. The pod image is the test process's."""
    shutil.rmtree(self.pods, ignore_errors=True)

  def launcher_data(self) -> Dict[str, str]:
    """The data of the namespace's `kfp-launcher` ConfigMap ({} if none)."""
    config = self.launcher_config
    if self.cluster is not None:
      found = self.cluster.store.get(
          ("v1", standin_cluster.NAMESPACE, "configmaps", "kfp-launcher"))
      config = (found or {}).get("data", config)
    return config

  def namespace_secrets(self) -> Dict[str, Dict[str, str]]:
    """The namespace's Secrets: the cluster's, else those the test gave."""
    return {**self.secrets, **(self.cluster.store.secrets if self.cluster else {})}

  def root_of(self, pipeline_root: Optional[str]) -> str:
    """The run's pipeline root as the root DAG's driver resolves it."""
    return pipeline_root or self.launcher_data().get("defaultPipelineRoot") or DEFAULT_ROOT

  def run(self, spec_path: str, params: Dict, image: str = "local/image:test",
          log_dir: Optional[str] = None, run_id: Optional[str] = None,
          pipeline_root: Optional[str] = None) -> Run:
    """Runs the compiled spec's tasks once, in dependency order, a sub-DAG's
    (the exit handler's) inside it; a task whose trigger strategy is
    ALL_UPSTREAM_TASKS_COMPLETED runs after its upstream failed too
    (`argocompiler/dag.go` depends_exit_handler), the others are skipped.

    Raises:
      StepFailed: naming the first task that failed, with the end of its
        log, after the exit task ran; its `run` is the Run so far.
    """
    spec, platform = load_spec(spec_path)
    fed = final_status_tasks(spec)
    if fed and self.version < FINAL_STATUS_FROM:  # the API server's CreateRun
      raise RunRefused(f"Failed to create a run: failed to add implicit deps: task final "
                       f"status not supported yet (tasks {fed})")
    self._publishing = self.publish_logs and self.version >= (2, 5)
    root_defs = spec["root"].get("inputDefinitions", {}).get("parameters", {})
    scope = {name: d.get("defaultValue") for name, d in root_defs.items()}
    scope.update(params)
    # The root driver's session for the launchers (kfp_launcher_providers.py),
    # before any step: a root it cannot parse, or providers it cannot read,
    # fail the run there.
    try:
      self._session = kfp_launcher_providers.session_info(
          self.launcher_data(), self.root_of(pipeline_root), self.version)
    except DriverPanic as e:  # no error to wrap: the driver's pod crashes
      raise StepFailed(f"driver.RootDAG: {e}") from None
    except StoreError as e:
      raise StepFailed(f"driver.RootDAG failed: {e}") from None
    run_root = self._run_root(spec, pipeline_root, run_id)
    # The launcher's bucket config is the run context's root
    # (`launcher_v2.go`@2.17.0 lines 252-258, GetPipeline's `pipeline_root`).
    self._launcher_root = run_root
    self._root_bucket = self.root_of(pipeline_root).split("://", 1)[-1].split("/")[0]
    executors = platform.get("platforms", {}).get("kubernetes", {}).get(
        "deploymentSpec", {}).get("executors", {})
    result = Run({}, {}, {})
    failures: List[StepFailed] = []
    # The run's Argo Workflow's name (the driver's --run_name), and what
    # ML Metadata keeps of each task: its execution's last known state.
    self._run_name = f"{spec['pipelineInfo']['name']}-{run_id or uuid.uuid4().hex[:8]}"
    self._mlmd_states: Dict[str, str] = {}
    if self.cluster is not None:
      self.workflow = self.cluster.add_workflow(self._run_name)
    self._run_dag(spec, spec["root"]["dag"]["tasks"], scope, run_root, executors,
                  image, log_dir, result, failures, root_dag=True)
    if failures:
      failures[0].run = result
      raise failures[0]
    return result

  def _run_root(self, spec: Dict, pipeline_root: Optional[str],
                run_id: Optional[str]) -> str:
    """The run context's pipeline_root (metadata/client.go GetPipeline): every
    output URI lies under <pipeline root>/<pipeline name>/<run id>."""
    return "/".join([self.root_of(pipeline_root).rstrip("/"),
                     spec["pipelineInfo"]["name"], run_id or uuid.uuid4().hex])

  def _run_dag(self, spec, tasks, scope, run_root, executors, image, log_dir,
               result, failures, root_dag: bool = False, dag: str = "") -> bool:
    """Runs a DAG's tasks (those of the DAG task `dag`, else the root's);
    returns whether all of them succeeded."""
    done: Dict[str, int] = {}
    failed: set = set()
    children: Dict[str, Optional[str]] = {}
    if dag:
      self._mlmd_states[dag] = "RUNNING"  # as the DAG's driver creates it
    for name in task_order(tasks):
      task = tasks[name]
      upstream = set(task.get("dependentTasks", [])) | {
          p["taskOutputParameter"]["producerTask"]
          for p in task.get("inputs", {}).get("parameters", {}).values()
          if "taskOutputParameter" in p}
      exit_task = task.get("triggerPolicy", {}).get("strategy") == \
          "ALL_UPSTREAM_TASKS_COMPLETED"
      if (upstream & failed or (self.fail_fast and failures)) and not exit_task:
        result.states[name] = "SKIPPED"
        failed.add(name)
        continue
      component = spec["components"][task["componentRef"]["name"]]
      if "dag" in component:
        inner = {k: self._parameter(v, scope, done, name)
                 for k, v in task.get("inputs", {}).get("parameters", {}).items()}
        ok = self._run_dag(spec, component["dag"]["tasks"], inner, run_root,
                           executors, image, log_dir, result, failures, dag=name)
        result.states[name] = "COMPLETE" if ok else "FAILED"
        children[name] = self._mlmd_states[name]
        if not ok:
          failed.add(name)
        continue
      try:
        retries = (task["retryPolicy"].get("maxRetryCount", 0) if "retryPolicy" in task
                   else self.default_retries)
        if not (root_dag or self.version >= (2, 14)):
          retries = 0  # kubeflow/pipelines#11908
        done[name] = self._run_task(spec, name, task, component, scope, done, run_root,
                                    executors, image, log_dir, result, retries)
        children[name] = "CACHED" if result.states[name] == "CACHED" else "COMPLETE"
      except StepFailed as e:
        result.states[name] = "FAILED"
        failures.append(e)
        failed.add(name)
        children[name] = e.mlmd_state
      if children.get(name):
        self._mlmd_states[name] = children[name]
      # Only a launcher that ends updates the DAG's state (a cache hit's
      # driver does not; a killed launcher cannot).
      if dag and children.get(name) in ("COMPLETE", "FAILED"):
        self._mlmd_states[dag] = dag_state(children, len(tasks)) or self._mlmd_states[dag]
    return not failed

  def _run_task(self, spec, name, task, component, scope, done, run_root, executors,
                image, log_dir, result, retries: int = 0) -> int:
    label = component["executorLabel"]
    container = dict(spec["deploymentSpec"]["executors"][label]["container"])
    container["image"] = image or container["image"]
    executor_input = self._executor_input(task, component, scope, done, run_root, name)
    fingerprint = self._fingerprint(executor_input, container)
    cached = task.get("cachingOptions", {}).get("enableCache") and self.cache.get(fingerprint)
    pod = pod_patch(executors.get(label, {}))
    result.pods[name] = pod
    if cached:
      outputs = {key: art.id for key, art in self._outputs_of(cached).items()}
      execution = self._record(name, outputs, mlmd.Execution.CACHED,
                               self._parameters_of(cached))
      result.states[name] = "CACHED"
    else:
      first = time.time()
      for attempt in range(retries + 1):
        result.attempts[name] = attempt + 1
        launched = self._attempt_input(executor_input, attempt)
        kill = self.kills.pop(name, None) if attempt == 0 else None
        try:
          reported, values = self._execute(name, launched, container, pod, log_dir, kill=kill)
          break
        except StepFailed as e:
          if attempt == retries or not self._retry(e, task, attempt, first):
            raise
      outputs = {}
      for key, listed in launched["outputs"]["artifacts"].items():
        outputs[key] = self._record_artifact(
            key, self._merged(key, listed["artifacts"][0], reported))
      execution = self._record(name, outputs, mlmd.Execution.COMPLETE, values)
      self.cache[fingerprint] = execution
      result.states[name] = "EXECUTED"
    for key, art in self._outputs_of(execution).items():
      result.outputs[(name, key)] = _runtime_artifact(art, {"instanceSchema": ""})
    result.parameters[name] = self._parameters_of(execution)
    return execution

  def _parameter(self, value, scope, done, name):
    """One input parameter's value (driver/resolve.go resolveInputParameter)."""
    if "taskOutputParameter" in value:
      producer = value["taskOutputParameter"]
      if producer["producerTask"] not in done:
        failed = StepFailed(f"step {name}: producer task, {producer['producerTask']}, "
                            f"not in tasks (driver/resolve.go)")
        failed.mlmd_state = None  # the driver failed: no execution
        raise failed
      return self._parameters_of(done[producer["producerTask"]])[
          producer["outputParameterKey"]]
    if "componentInputParameter" in value:
      return scope[value["componentInputParameter"]]
    return value["runtimeValue"]["constant"]

  def _inputs(self, task, component, scope, done, name) -> Dict:
    """The executor input's `inputs`: the parameters resolved, the artifacts
    read back from ML Metadata, typed as the flavour types them."""
    params = {key: (self._final_status(task, component, key, name) if "taskFinalStatus" in value
                    else self._parameter(value, scope, done, name))
              for key, value in task.get("inputs", {}).get("parameters", {}).items()}
    declared = component.get("inputDefinitions", {}).get("artifacts", {})
    artifacts = {}
    for key, ref in task.get("inputs", {}).get("artifacts", {}).items():
      producer = ref["taskOutputArtifact"]
      art = self._outputs_of(done[producer["producerTask"]])[producer["outputArtifactKey"]]
      kind = ({"instanceSchema": ""} if self.flavour == "oss"
              else declared[key]["artifactType"])
      artifacts[key] = {"artifacts": [self._runtime(art, kind)]}
    return {"parameterValues": params, "artifacts": artifacts}

  def _final_status(self, task: Dict, component: Dict, key: str, name: str) -> Dict:
    """A final status input, as the driver resolves it (resolve.go@2.17.0
    lines 458-493): from the task's first dependent task, whatever its
    `producerTask` says."""
    declared = component.get("inputDefinitions", {}).get("parameters", {}).get(key, {})
    kind = declared.get("parameterType", "")
    failed = None
    if kind not in ("STRUCT", "TASK_FINAL_STATUS"):  # resolve.go@2.17.0 line 247
      failed = StepFailed(f'step {name}: input parameter "{key}" type mismatch: '
                          f'expect {kind}, got struct')
    elif not task.get("dependentTasks"):
      failed = StepFailed(f"step {name}: task {name} has no dependent tasks")
    elif task["dependentTasks"][0] not in self._mlmd_states:
      failed = StepFailed(f"step {name}: producer task, {task['dependentTasks'][0]}, "
                          f"not in tasks")
    if failed:
      failed.mlmd_state = None  # the driver's failure: no execution
      raise failed
    producer = task["dependentTasks"][0]
    return final_status(self._mlmd_states[producer], self._run_name, producer)

  def _runtime(self, art: mlmd.Artifact, kind: Dict) -> Dict:
    return _runtime_artifact(art, kind)

  def _executor_input(self, task, component, scope, done, run_root, name):
    inputs = self._inputs(task, component, scope, done, name)
    # driver.go provisionOutputs: every output under one task root.
    task_root = f"{run_root}/{name}/{uuid.uuid4()}"
    declared_outputs = dict(component.get("outputDefinitions", {}).get("artifacts", {}))
    if self._publishing:
      declared_outputs[LOGS] = {"artifactType": {"schemaTitle": "system.Artifact"}}
    named = self.version >= (2, 15)
    outputs = {
        key: {"artifacts": [{
            **({"name": key} if named else {}), "uri": f"{task_root}/{key}",
            "type": d["artifactType"], "metadata": d.get("metadata", {})}]}
        for key, d in declared_outputs.items()}
    output_file = "/tmp/kfp_outputs/output_metadata.json"  # OutputMetadataFilepath
    if named and any(task_root.startswith(p) for p in LOCAL_PREFIX):
      output_file = _local_path(task_root, "/") + "/output_metadata.json"
    declared_params = component.get("outputDefinitions", {}).get("parameters", {})
    return {"inputs": inputs,
            "outputs": {"artifacts": outputs,
                        "parameters": {key: {"outputFile": f"/tmp/kfp/outputs/{key}"}
                                       for key in declared_params},
                        "outputFile": output_file}}

  def _retry(self, failed: StepFailed, task: Dict, attempt: int, first: float) -> bool:
    """Whether the failed attempt is started again: by Argo's policy, and
    not after the task's backoff max duration from the first attempt's
    start (operator.go@v4.0.5 lines 1026-1041)."""
    deadline = first + (_seconds(task["retryPolicy"].get(
        "backoffMaxDuration", "0s" if self.version >= (2, 17) else ""))
        if "retryPolicy" in task else float("inf"))  # templateDefaults: no backoff
    return self._retried(failed.phase) and time.time() <= deadline

  def _retried(self, phase: str) -> bool:
    """Whether Argo's retry policy retries a node in this phase
    (operator.go@v4.0.5 lines 1114-1124)."""
    return self.retry_policy == "Always" or (self.retry_policy, phase) in (
        ("OnFailure", "Failed"), ("OnError", "Error"))

  def _attempt_input(self, executor_input: Dict, attempt: int) -> Dict:
    """The executor input one attempt's launcher runs with: from 2.16.1 the
    log's URI carries the retry index (qualifyExecutorLogsURI; the index is
    Argo's, 0 for the first attempt)."""
    mine = json.loads(json.dumps(executor_input))
    logs = mine["outputs"]["artifacts"].get(LOGS)
    if logs and self.version >= (2, 16, 1):
      logs["artifacts"][0]["uri"] += f"-{attempt}"
    return mine

  @staticmethod
  def _fingerprint(executor_input, container) -> str:
    """GenerateCacheKey + GenerateFingerPrint."""
    key = {
        "inputArtifactNames": {
            k: {"artifactNames": [a["name"] for a in v["artifacts"]]}
            for k, v in executor_input["inputs"]["artifacts"].items()},
        "inputParameterValues": executor_input["inputs"]["parameterValues"],
        "outputArtifactsSpec": {
            k: {kk: vv for kk, vv in v["artifacts"][0].items() if kk != "uri"}
            for k, v in executor_input["outputs"]["artifacts"].items()},
        "outputParametersSpec": {
            k: "STRING" for k in executor_input["outputs"].get("parameters", {})},
        "containerSpec": {"image": container["image"],
                          "cmdArgs": container["command"] + container["args"]}}
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()

  def _execute(self, name, executor_input, container, pod, log_dir, kill=None) -> Dict:
    pod_dir = os.path.join(self.pods, f"{name}-{uuid.uuid4().hex[:6]}")
    work = os.path.join(pod_dir, "work")
    os.makedirs(work)
    os.makedirs(os.path.join(pod_dir, "tmp", "kfp", "outputs"))

    def in_pod(path: str) -> str:  # a path of the pod's file system, here
      return os.path.join(pod_dir, path.lstrip("/"))
    local_input = json.loads(json.dumps(executor_input))
    output_file = in_pod(executor_input["outputs"]["outputFile"])
    local_input["outputs"]["outputFile"] = output_file
    for spec in local_input["outputs"].get("parameters", {}).values():
      spec["outputFile"] = in_pod(spec["outputFile"])
    container_env = {**{e["name"]: e["value"] for e in container.get("env", [])},
                     **{var: self.namespace_secrets().get(secret, {}).get(key, "")
                        for var, (secret, key) in pod["secret_env"].items()}}
    bucket = self._open_bucket(name, container_env)
    self._stage(executor_input, pod_dir, bucket)
    logs = executor_input["outputs"]["artifacts"].get(LOGS)
    log_uri = logs["artifacts"][0]["uri"] if logs else None
    if log_uri:  # getLogWriter: os.Create before the container starts
      open(_local_path(log_uri, pod_dir), "w").close()
    # The launcher fills placeholders in the command as in the args
    # (launcher_v2.go@2.5.0 lines 363-376).
    args = self._args(container["args"], local_input, name)
    command = self._args(list(container["command"]), local_input, name)
    env = {"PATH": os.environ["PATH"], "HOME": work, "TMPDIR": os.path.join(pod_dir, "tmp")}
    # The image's interpreter, also behind `env NAME=VALUE ...`.
    at = next(i for i, part in enumerate(command) if command[0] != "env" or (
        i > 0 and "=" not in part))
    if command[at] == "python":
      command[at] = self.image["python"] if self.image else sys.executable
      env.update(self.image["env"] if self.image else {})
    env.update(self._platform_env(name))
    env.update({e["name"]: e["value"] for e in container.get("env", [])})
    for var, (secret, key) in pod["secret_env"].items():
      env[var] = self.secrets[secret][key]
    if self.workflow is not None:
      env.update(KUBECONFIG=self.kubeconfig, **standin_cluster.pod_env(
          self.cluster.add_pod(self.workflow, name.lower(), container["image"])))
    if self.user is not None:
      for mine in ("tmp", *LOCAL_PREFIX.values()):
        _chown_tree(os.path.join(pod_dir, mine), self.user)
      command = ["setpriv", f"--reuid={self.user}", f"--regid={self.user}",
                 "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                 "--no-new-privs", *command]
    log = os.path.join(log_dir or pod_dir, f"{name}.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    if os.path.exists(log):  # an earlier attempt's
      shutil.move(log, log.replace(".log", f".attempt-{uuid.uuid4().hex[:4]}.log"))
    with open(log, "w") as f:
      proc = subprocess.Popen(command + args, stdout=f, stderr=subprocess.STDOUT,
                              env=env, cwd=work, start_new_session=True)
      predicate, how = kill if isinstance(kill, tuple) else (kill, "deleted")
      code = _wait(proc, (lambda: predicate(executor_input)) if predicate else None)
    killed = bool(predicate) and code == -signal.SIGKILL
    self._after_step(pod_dir)
    # A killed pod's launcher dies with it, and publishes nothing.
    if log_uri and not killed:
      self._tee(log, log_uri, pod_dir)
    if code:
      if log_uri and self.version >= (2, 16) and not killed:
        try:  # launcher_v2.go@2.17.0 lines 448-457: the log alone, its error dropped
          self._upload_outputs({LOGS: logs}, {}, pod_dir, bucket)
        except StepFailed:
          pass
      with open(log) as f:
        failed = StepFailed(f"step {name} exited {code}; its log ends:\n{f.read()[-4000:]}")
      failed.phase = "Error" if killed and how == "deleted" else "Failed"
      failed.mlmd_state = "RUNNING" if killed else "FAILED"  # a killed launcher publishes nothing
      raise failed
    reported = {}
    if os.path.exists(output_file):  # getExecutorOutputFile: none is no output
      with open(output_file) as f:
        reported = json.load(f)
    values = reported.get("parameterValues", {})
    for key, spec in local_input["outputs"].get("parameters", {}).items():
      if key not in values:  # collectOutputParameters: else the parameter's file
        try:
          with open(spec["outputFile"]) as f:
            values[key] = f.read()
        except OSError as e:
          raise StepFailed(f"step {name}: failed to read output parameter name={key!r} "
                           f"path={executor_input['outputs']['parameters'][key]['outputFile']!r}"
                           f": {e.strerror} (launcher_v2.go collectOutputParameters)") from None
    # Then every output, after the parameters (launcher_v2.go@2.17.0 lines 462-471).
    self._upload_outputs(executor_input["outputs"]["artifacts"], reported.get("artifacts", {}),
                         pod_dir, bucket)
    return reported.get("artifacts", {}), values

  def _open_bucket(self, name: str, env: Dict[str, str]):
    """OpenBucket on the run's session, before the step starts
    (`launcher_v2.go`@2.17.0 line 269, @2.5.0 line 220); None for a root
    that is not s3:// (minio:// and gs:// have no stand-in store here)."""
    if self._session.get("Provider") != "s3":
      return None
    try:
      return kfp_launcher_store.open_bucket(
          self._session, self._root_bucket, self.namespace_secrets(), env, self.version,
          self.namespace)
    except StoreError as e:
      raise StepFailed(f"step {name}: the launcher failed before the step: {e}") from None

  def _stage(self, executor_input: Dict, pod_dir: str, bucket=None) -> None:
    """downloadArtifacts, then prepareOutputFolders: the launcher's work in
    the pod before the container starts."""
    for key, listed in executor_input["inputs"]["artifacts"].items():
      self._download(listed["artifacts"][0]["uri"], pod_dir, key, bucket)
    for listed in executor_input["outputs"]["artifacts"].values():
      os.makedirs(os.path.dirname(_local_path(listed["artifacts"][0]["uri"], pod_dir)),
                  exist_ok=True)

  @staticmethod
  def _args(args: List[str], local_input: Dict, name: str) -> List[str]:
    """The container's command or args with `{{$}}` replaced by the executor
    input and `{{$.inputs.parameters['NAME']}}` by the parameter's value
    (launcher_v2.go@2.5.0 getPlaceholders, lines 736-800: a string as it
    is, a number as Go formats it, a bool as true/false)."""
    values = local_input.get("inputs", {}).get("parameterValues", {})

    def text(match) -> str:
      value = values.get(match.group(1))
      if isinstance(value, bool):
        return str(value).lower()
      if isinstance(value, float) and value.is_integer():
        return str(int(value))
      return value if isinstance(value, str) else json.dumps(value)
    return [json.dumps(local_input) if a == "{{$}}" else INPUT_PARAMETER.sub(text, a)
            for a in args]

  def _platform_env(self, name: str) -> Dict[str, str]:
    """What the platform adds to the step's environment: nothing here (the
    pod's environment is the spec's and its secrets)."""
    return {}

  def _after_step(self, pod_dir: str) -> None:
    """After the container ends, before its outputs are read: nothing here."""

  def _tee(self, log: str, uri: str, pod_dir: str) -> None:
    """What getLogWriter's tee wrote into the log output's local path: the
    container's output (a path the step replaced by a folder gets none)."""
    local = _local_path(uri, pod_dir)
    if os.path.isfile(local):
      with open(log, "rb") as src, open(local, "ab") as dst:
        shutil.copyfileobj(src, dst)

  def _merged(self, key: str, artifact: Dict, reported: Dict) -> Dict:
    """mergeRuntimeArtifacts: the executor output's URI and metadata over the
    launcher's (`launcher_v2.go`@2.5.0 lines 551-554, 835-849); from 2.16.1
    not for the log, whatever the executor output says (@2.17.0 line 804)."""
    merged = (reported.get(key, {}).get("artifacts") or [{}])[0]
    if key == LOGS and self.version >= (2, 16, 1):
      merged = {}
    return {**artifact, "uri": merged.get("uri") or artifact["uri"],
            "metadata": {**artifact.get("metadata", {}), **merged.get("metadata", {})}}

  def _upload_outputs(self, outputs: Dict, reported: Dict, pod_dir: str, bucket=None) -> None:
    """uploadOutputArtifacts (`launcher_v2.go`@2.17.0 lines 778-856, @2.5.0
    lines 540-592), for every output, not the log alone: its URI, merged,
    must lie under the run's root (KeyFromURI, `objectstore/config.go`
    @2.17.0 lines 101-112), and whatever the pod holds at its local path
    is uploaded, as one object or a folder's (UploadBlob), into the bucket
    the launcher opened (kfp_launcher_store.py): the log the launcher
    wrote, and an output the step wrote under `/s3/` itself. A missing path
    is skipped (lines 824-831); a URI of no known scheme is not uploaded."""
    prefixed = self._launcher_root.rstrip("/")  # PrefixedBucket: no trailing /
    for key, listed in outputs.items():
      uri = self._merged(key, listed["artifacts"][0], reported)["uri"]
      if not uri.startswith(tuple(LOCAL_PREFIX)):
        continue  # LocalPathForURI fails: a warning
      blob = uri[len(prefixed):].lstrip("/") if uri.startswith(prefixed) else None
      if not blob:
        why = ("does not have expected bucket prefix" if blob is None
               else "has empty key given prefixed bucket")
        raise StepFailed(f"failed to upload output artifact {q(key)}: URI {q(uri)} {why} "
                         f"{q(prefixed)}")  # @2.17.0 line 822, @2.5.0 line 563
      local = _local_path(uri, pod_dir)
      if not (uri.startswith("s3://") and bucket is not None and os.path.exists(local)):
        continue
      try:
        bucket.upload(local, uri[len("s3://"):].partition("/")[2])
      except StoreError as e:  # launcher_v2.go@2.17.0 line 834, @2.5.0 line 570
        raise StepFailed(f"failed to upload output artifact {q(key)} to remote storage "
                         f"URI {q(uri)}: {e}") from None

  def _download(self, uri: str, pod_dir: str, key: str, bucket=None) -> None:
    """downloadArtifacts: every object under the URI, into the pod, from the
    run's bucket, or, for another bucket, one opened with no session: AWS's
    defaults (`launcher_v2.go`@2.17.0 lines 1030-1040, @2.5.0 lines 714-724)."""
    if not uri.startswith("s3://") or self._session.get("Provider") != "s3":
      return  # gs:// and minio:// have no stand-in here; a local path is skipped
    local = _local_path(uri, pod_dir)
    name, _, prefix = uri[len("s3://"):].partition("/")
    if bucket is None or bucket.name != name:
      bucket = kfp_launcher_store.open_bucket(None, name, {}, {}, self.version)
    try:
      for found in bucket.objects(prefix):
        if self.version >= (2, 17):  # object_store.go@2.17.0 lines 146-205
          if found != prefix.rstrip("/") and not found.startswith(prefix.rstrip("/") + "/"):
            continue  # a sibling's key, `model_run/...` beside `model`: skipped
          if ".." in found.split("/"):
            raise StoreError(f"path traversal detected: blob key {q(found)} contains '..' "
                             f"component")
        # Before 2.17 every key the listing gives is copied, relative to the
        # URI's key (filepath.Rel, @2.5.0 lines 140-144): a sibling's lands
        # beside the input's folder.
        path = os.path.normpath(os.path.join(local, os.path.relpath(found, prefix)))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        bucket.download(found, path)
    except (StoreError, OSError) as e:  # @2.17.0 line 975, @2.5.0 line 660
      raise StepFailed(f"failed to download input artifact {q(key)} from remote "
                       f"storage URI {q(uri)}: {e}") from None

  def _record_artifact(self, key: str, artifact: Dict) -> int:
    """RecordArtifact."""
    kind = artifact["type"]
    schema = kind.get("instanceSchema") or f"title: {kind['schemaTitle']}"
    type_id = self.store.put_artifact_type(
        mlmd.ArtifactType(name=yaml.safe_load(schema)["title"]), can_add_fields=True)
    art = mlmd.Artifact(type_id=type_id, uri=artifact["uri"], state=mlmd.Artifact.LIVE)
    for k, v in artifact.get("metadata", {}).items():
      art.custom_properties[k].CopyFrom(_to_mlmd_value(v))
    art.custom_properties["display_name"].string_value = key
    # metadata/client.go RecordArtifact: the run's session, as the launcher had it.
    art.custom_properties["store_session_info"].string_value = json.dumps(
        self._session or {"Provider": "", "Params": {}})
    return self.store.put_artifacts([art])[0]

  def _record(self, name: str, outputs: Dict[str, int], state,
              parameters: Optional[Dict] = None) -> int:
    type_id = self.store.put_execution_type(mlmd.ExecutionType(name="system.ContainerExecution"))
    events = []
    for key, artifact_id in outputs.items():
      event = mlmd.Event(type=mlmd.Event.OUTPUT, artifact_id=artifact_id)
      event.path.steps.add().key = key
      events.append((self.store.get_artifacts_by_id([artifact_id])[0], event))
    execution = mlmd.Execution(type_id=type_id, last_known_state=state)
    execution.custom_properties["task_name"].string_value = name
    if parameters:
      execution.custom_properties["outputs"].struct_value.update(parameters)
    return self.store.put_execution(execution, events, [])[0]

  def _parameters_of(self, execution_id: int) -> Dict:
    """The output parameters PublishExecution stored on an execution."""
    [execution] = self.store.get_executions_by_id([execution_id])
    if "outputs" not in execution.custom_properties:
      return {}
    return json_format.MessageToDict(execution.custom_properties["outputs"].struct_value)

  def _outputs_of(self, execution_id: int) -> Dict[str, mlmd.Artifact]:
    """GetOutputArtifactsByExecutionId: output key -> MLMD artifact."""
    events = self.store.get_events_by_execution_ids([execution_id])
    ids = {e.artifact_id: e.path.steps[0].key for e in events
           if e.type == mlmd.Event.OUTPUT}
    return {ids[a.id]: a for a in self.store.get_artifacts_by_id(list(ids))}


def _runtime_artifact(art: mlmd.Artifact, kind: Dict) -> Dict:
  """toRuntimeArtifact, with the type the flavour gives."""
  metadata = {k: _from_mlmd_value(v) for k, v in art.properties.items()}
  metadata.update({k: _from_mlmd_value(v) for k, v in art.custom_properties.items()})
  return {"name": str(art.id), "uri": art.uri, "type": kind, "metadata": metadata}


@functools.lru_cache(maxsize=None)
def shared_pod_image() -> Dict:
  """pod_image, made once per test process and deleted when it exits: each
  copy costs about 6.5 s of CPU (hard links to some 88,000 files, then their
  removal), and the steps only read it."""
  folder = tempfile.mkdtemp(prefix="kfp-image-")
  os.chmod(folder, 0o755)
  atexit.register(shutil.rmtree, folder, True)
  return pod_image(folder)


def pod_image(folder: str) -> Dict:
  """The image's interpreter and code, where any user can read them.

  The real image installs Python and the project world-readable. Here the
  interpreter, the venv and the checkout may sit below folders only their
  owner can enter (pyenv under /root, a fresh clone under `mktemp -d`), so
  they are linked (hard links: instant, and readable by their own modes)
  into `folder/image`: the base Python, the venv (its `pyvenv.cfg` and
  `python` pointing at that copy), and the project's packages, which come
  first on the path (PYTHONPATH) as the installed copy does in the image.

  Returns:
    {"python": the interpreter, "env": what the pod's environment adds}.
  """
  image = os.path.join(folder, "image")
  repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  os.makedirs(image)
  for source, target in ((sys.base_prefix, "base"), (sys.prefix, "venv")):
    # The folder itself, not a link to it: its pyvenv.cfg is replaced below.
    subprocess.run(["cp", "-al", os.path.realpath(source), os.path.join(image, target)],
                   check=True)
  venv = os.path.join(image, "venv")
  os.unlink(os.path.join(venv, "pyvenv.cfg"))  # a hard link: never edit in place
  with open(os.path.join(venv, "pyvenv.cfg"), "w") as f:
    f.write(f"home = {os.path.join(image, 'base', 'bin')}\n"
            f"include-system-site-packages = false\n")
  version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
  for name in ("python", "python3", version):
    link = os.path.join(venv, "bin", name)
    if os.path.lexists(link):
      os.unlink(link)
    os.symlink(os.path.join(image, "base", "bin", version), link)
  code = os.path.join(image, "code")
  os.makedirs(code)
  for name in os.listdir(repo):
    if os.path.isfile(os.path.join(repo, name, "__init__.py")):
      subprocess.run(["cp", "-al", os.path.join(repo, name), code], check=True)
  # The folders are the copy's own; the files are the originals' inodes,
  # whose modes stay as they are.
  subprocess.run(["find", image, "-type", "d", "-exec", "chmod", "a+rx", "{}", "+"],
                 check=True)
  return {"python": os.path.join(venv, "bin", "python"),
          "env": {"PYTHONPATH": code, "LD_LIBRARY_PATH": os.path.join(image, "base", "lib")}}


def _seconds(duration: str) -> float:
  """A retry policy's duration ("600s"; the argocompiler passes whole
  seconds) as seconds; no duration is no deadline."""
  return float(duration.rstrip("s")) if duration else float("inf")


def _wait(proc: subprocess.Popen, kill: Optional[Callable[[], bool]],
          timeout: float = 1800) -> int:
  """The pod's exit code; killed (its whole process group) when `kill` holds."""
  deadline = time.time() + timeout
  while proc.poll() is None:
    if time.time() > deadline or (kill and kill()):
      os.killpg(proc.pid, signal.SIGKILL)
      return proc.wait()
    time.sleep(0.05)
  return proc.returncode


def _chown_tree(folder: str, uid: int) -> None:
  """What the pod's user owns: its /tmp and the launcher's output paths."""
  if not os.path.exists(folder):
    return
  for path, _, files in os.walk(folder):
    os.chown(path, uid, uid)
    for name in files:
      os.chown(os.path.join(path, name), uid, uid)


def pod_patch(config: Dict) -> Dict:
  """What extendPodSpecPatch puts on the pod from a KubernetesExecutorConfig."""
  return {
      "node_selector": config.get("nodeSelector", {}).get("labels", {}),
      "tolerations": config.get("tolerations", []),
      "image_pull_secrets": [s["secretName"] for s in config.get("imagePullSecret", [])],
      "secret_env": {k["envVar"]: (s["secretName"], k["secretKey"])
                     for s in config.get("secretAsEnv", []) for k in s["keyToEnv"]}}


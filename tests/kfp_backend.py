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
- Outputs (`driver/driver.go` provisionOutputs, 2.5): URI
  `<pipeline root>/<pipeline name>/<run id>/<task>/<salt>/<key>`
  (GenerateOutputURI under the run context's `pipeline_root`,
  `metadata/client.go`), the type and
  metadata from the component's outputDefinitions, no name; the executor
  output file at the pod's `/tmp/kfp_outputs/output_metadata.json`.
- The launcher (`component/launcher_v2.go`): LocalPathForURI maps gs://,
  minio:// and s3:// to `/gcs/`, `/minio/`, `/s3/` in the pod and fails on
  anything else, so a local pipeline root fails here as on a cluster;
  downloadArtifacts copies every input artifact's objects into the pod
  (objectstore DownloadBlob: a `dir/` marker object becomes a file that
  later blocks its folder); prepareOutputFolders; the container's command and
  args with `{{$}}` replaced by the executor input; mergeRuntimeArtifacts of
  the executor output (URI, metadata); uploadOutputArtifacts of whatever
  the pod's local path holds; RecordArtifact: metadata to custom properties
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
  No final status input is given: the exit step here takes none.
- The pod: an empty working directory, so only what the image installs can
  import; the environment is the container's `env` from the spec and the
  Kubernetes platform config's secrets (`driver.go` extendPodSpecPatch),
  nothing inherited but PATH. The image is this venv's interpreter.

Like the backend, it runs no resolver or importer, and no
`lifecycle.preCacheCheck` hook.
"""

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import uuid
from typing import Dict, List, Optional

import yaml
from google.protobuf import json_format
from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd

LOCAL_PREFIX = {"gs://": "gcs", "minio://": "minio", "s3://": "s3"}


class StepFailed(RuntimeError):
  run = None  # the Run so far, once the exit task has run


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


def load_spec(path: str):
  """(pipeline spec, platform spec or {}) from a compiled YAML file."""
  with open(path, encoding="utf-8") as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
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
               secrets: Optional[Dict[str, Dict[str, str]]] = None):
    """
    Args:
      home: where its ML Metadata store and the pods' folders go.
      s3: a boto3 S3 client (the launcher's blob store), or None.
      flavour: `oss` (untyped inputs) or `typed` (Vertex AI's feeding).
      secrets: Kubernetes secrets by name: key -> value.
    """
    self.home, self.s3, self.flavour = home, s3, flavour
    self.secrets = secrets or {}
    os.makedirs(home, exist_ok=True)
    config = mlmd.ConnectionConfig()
    config.sqlite.filename_uri = os.path.join(home, "mlmd.sqlite")
    config.sqlite.connection_mode = 3
    self.store = metadata_store.MetadataStore(config)
    self.cache: Dict[str, int] = {}  # fingerprint -> MLMD execution id

  def run(self, spec_path: str, params: Dict, image: str = "local/image:test",
          log_dir: Optional[str] = None, run_id: Optional[str] = None) -> Run:
    """Runs the compiled spec's tasks once, in dependency order, a sub-DAG's
    (the exit handler's) inside it; a task whose trigger strategy is
    ALL_UPSTREAM_TASKS_COMPLETED runs after its upstream failed too
    (`argocompiler/dag.go` depends_exit_handler), the others are skipped.

    Raises:
      StepFailed: naming the first task that failed, with the end of its
        log, after the exit task ran; its `run` is the Run so far.
    """
    spec, platform = load_spec(spec_path)
    root_defs = spec["root"].get("inputDefinitions", {}).get("parameters", {})
    scope = {name: d.get("defaultValue") for name, d in root_defs.items()}
    scope.update(params)
    # The run context's pipeline_root (metadata/client.go): every output
    # URI lies under <pipeline root>/<pipeline name>/<run id>.
    run_root = "/".join([spec["defaultPipelineRoot"].rstrip("/"),
                         spec["pipelineInfo"]["name"], run_id or uuid.uuid4().hex])
    executors = platform.get("platforms", {}).get("kubernetes", {}).get(
        "deploymentSpec", {}).get("executors", {})
    result = Run({}, {}, {})
    failures: List[StepFailed] = []
    self._run_dag(spec, spec["root"]["dag"]["tasks"], scope, run_root, executors,
                  image, log_dir, result, failures)
    if failures:
      failures[0].run = result
      raise failures[0]
    return result

  def _run_dag(self, spec, tasks, scope, run_root, executors, image, log_dir,
               result, failures) -> bool:
    """Runs a DAG's tasks; returns whether all of them succeeded."""
    done: Dict[str, int] = {}
    failed: set = set()
    for name in task_order(tasks):
      task = tasks[name]
      upstream = set(task.get("dependentTasks", [])) | {
          p["taskOutputParameter"]["producerTask"]
          for p in task.get("inputs", {}).get("parameters", {}).values()
          if "taskOutputParameter" in p}
      exit_task = task.get("triggerPolicy", {}).get("strategy") == \
          "ALL_UPSTREAM_TASKS_COMPLETED"
      if upstream & failed and not exit_task:
        result.states[name] = "SKIPPED"
        failed.add(name)
        continue
      component = spec["components"][task["componentRef"]["name"]]
      if "dag" in component:
        inner = {k: self._parameter(v, scope, done, name)
                 for k, v in task.get("inputs", {}).get("parameters", {}).items()}
        ok = self._run_dag(spec, component["dag"]["tasks"], inner, run_root,
                           executors, image, log_dir, result, failures)
        result.states[name] = "COMPLETE" if ok else "FAILED"
        if not ok:
          failed.add(name)
        continue
      try:
        done[name] = self._run_task(spec, name, task, component, scope, done, run_root,
                                    executors, image, log_dir, result)
      except StepFailed as e:
        result.states[name] = "FAILED"
        failures.append(e)
        failed.add(name)
    return not failed

  def _run_task(self, spec, name, task, component, scope, done, run_root, executors,
                image, log_dir, result) -> int:
    label = component["executorLabel"]
    container = dict(spec["deploymentSpec"]["executors"][label]["container"])
    container["image"] = image
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
      reported, values = self._execute(name, executor_input, container, pod, log_dir)
      outputs = {}
      for key, listed in executor_input["outputs"]["artifacts"].items():
        artifact = listed["artifacts"][0]
        merged = reported.get(key, {}).get("artifacts", [{}])[0]
        artifact["uri"] = merged.get("uri") or artifact["uri"]
        artifact["metadata"] = {**artifact.get("metadata", {}),
                                **merged.get("metadata", {})}
        outputs[key] = self._record_artifact(key, artifact)
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
        raise StepFailed(f"step {name}: producer task, {producer['producerTask']}, "
                         f"not in tasks (driver/resolve.go)")
      return self._parameters_of(done[producer["producerTask"]])[
          producer["outputParameterKey"]]
    if "componentInputParameter" in value:
      return scope[value["componentInputParameter"]]
    return value["runtimeValue"]["constant"]

  def _executor_input(self, task, component, scope, done, run_root, name):
    params = {key: self._parameter(value, scope, done, name)
              for key, value in task.get("inputs", {}).get("parameters", {}).items()}
    declared = component.get("inputDefinitions", {}).get("artifacts", {})
    artifacts = {}
    for key, ref in task.get("inputs", {}).get("artifacts", {}).items():
      producer = ref["taskOutputArtifact"]
      art = self._outputs_of(done[producer["producerTask"]])[producer["outputArtifactKey"]]
      kind = ({"instanceSchema": ""} if self.flavour == "oss"
              else declared[key]["artifactType"])
      artifacts[key] = {"artifacts": [_runtime_artifact(art, kind)]}
    salt = uuid.uuid4().hex[:12]
    outputs = {
        key: {"artifacts": [{
            "uri": f"{run_root}/{name}/{salt}/{key}",
            "type": d["artifactType"], "metadata": d.get("metadata", {})}]}
        for key, d in component.get("outputDefinitions", {}).get("artifacts", {}).items()}
    declared_params = component.get("outputDefinitions", {}).get("parameters", {})
    return {"inputs": {"parameterValues": params, "artifacts": artifacts},
            "outputs": {"artifacts": outputs,
                        "parameters": {key: {"outputFile": f"/tmp/kfp_outputs/{key}"}
                                       for key in declared_params},
                        "outputFile": "/tmp/kfp_outputs/output_metadata.json"}}

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

  def _execute(self, name, executor_input, container, pod, log_dir) -> Dict:
    pod_dir = os.path.join(self.home, "pods", f"{name}-{uuid.uuid4().hex[:6]}")
    work = os.path.join(pod_dir, "work")
    os.makedirs(work)
    # The pod's /tmp, where the executor output file goes.
    local_input = json.loads(json.dumps(executor_input))
    output_file = os.path.join(pod_dir, "tmp", "kfp_outputs", "output_metadata.json")
    local_input["outputs"]["outputFile"] = output_file
    for key, spec in local_input["outputs"].get("parameters", {}).items():
      spec["outputFile"] = os.path.join(pod_dir, "tmp", "kfp_outputs", key)
    for key, listed in executor_input["inputs"]["artifacts"].items():
      self._download(listed["artifacts"][0]["uri"], pod_dir, key)
    for listed in executor_input["outputs"]["artifacts"].values():
      os.makedirs(os.path.dirname(_local_path(listed["artifacts"][0]["uri"], pod_dir)),
                  exist_ok=True)
    args = [json.dumps(local_input) if a == "{{$}}" else a for a in container["args"]]
    command = list(container["command"])
    if command[0] == "python":
      command[0] = sys.executable  # the image's interpreter
    env = {"PATH": os.environ["PATH"], "HOME": work, "TMPDIR": work}
    env.update({e["name"]: e["value"] for e in container.get("env", [])})
    for var, (secret, key) in pod["secret_env"].items():
      env[var] = self.secrets[secret][key]
    log = os.path.join(log_dir or pod_dir, f"{name}.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
      code = subprocess.run(command + args, stdout=f, stderr=subprocess.STDOUT,
                            env=env, cwd=work, timeout=1800).returncode
    if code:
      with open(log) as f:
        raise StepFailed(f"step {name} exited {code}; its log ends:\n{f.read()[-4000:]}")
    if not os.path.exists(output_file):
      return {}, {}
    with open(output_file) as f:
      reported = json.load(f)
    values = reported.get("parameterValues", {})
    missing = set(executor_input["outputs"].get("parameters", {})) - set(values)
    if missing:
      raise StepFailed(f"step {name}: output parameters {sorted(missing)} not in its "
                       f"executor output (launcher_v2.go collectOutputParameters)")
    return reported.get("artifacts", {}), values

  def _download(self, uri: str, pod_dir: str, key: str) -> None:
    """downloadArtifacts: every object under the URI, into the pod."""
    if not uri.startswith("s3://") or self.s3 is None:
      return  # gs:// and minio:// have no stand-in here; a local path is skipped
    local = _local_path(uri, pod_dir)
    bucket, _, prefix = uri[len("s3://"):].partition("/")
    pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
      for obj in page.get("Contents", []):
        path = os.path.normpath(os.path.join(local, os.path.relpath(obj["Key"], prefix)))
        try:
          os.makedirs(os.path.dirname(path), exist_ok=True)
          self.s3.download_file(bucket, obj["Key"], path)
        except OSError as e:
          raise StepFailed(f"failed to download input artifact {key!r} from remote "
                           f"storage URI {uri}: {e}") from None

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
    art.custom_properties["store_session_info"].string_value = json.dumps(
        {"Provider": "s3" if artifact["uri"].startswith("s3://") else "", "Params": {}})
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


def pod_patch(config: Dict) -> Dict:
  """What extendPodSpecPatch puts on the pod from a KubernetesExecutorConfig."""
  return {
      "node_selector": config.get("nodeSelector", {}).get("labels", {}),
      "tolerations": config.get("tolerations", []),
      "image_pull_secrets": [s["secretName"] for s in config.get("imagePullSecret", [])],
      "secret_env": {k["envVar"]: (s["secretName"], k["secretKey"])
                     for s in config.get("secretAsEnv", []) for k in s["keyToEnv"]}}


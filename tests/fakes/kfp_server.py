"""A STAND-IN Kubeflow Pipelines API server on 127.0.0.1, for contract tests.

No Kubeflow cluster can run here. This server implements the part of the
v2beta1 REST API that `python -m commands.kubeflow submit|schedule|schedules` call
through `kfp.Client`, keeps its state in memory, and checks every request
body against the `kfp_server_api` models installed with kfp: an unknown
field, a wrong type or a value outside an enum is answered with HTTP 400,
as is an uploaded file that is not a pipeline spec, a run parameter the
pipeline does not declare, or a cron expression the scheduler would refuse.
It tests the contract, not a cluster.

With `multi_user`, it answers as a multi-user install's API server
(kubeflow/pipelines `backend/src/apiserver` at 2.17.0; `version` sets the
one rule that changed, below):
- Who asks: the bearer token's user (the TokenReview authenticator,
  `auth/auth.go` lines 35-45); none is 401 (`resource/resource_manager.go`
  IsAuthorized, lines 2338-2340). What a user may do is RBAC's: here the
  namespaces each token's user may act in (`users`), as a profile's
  kubeflow-edit binding grants them; a verb in any other namespace is 403
  (lines 2375-2384).
- Experiments carry the namespace, required (`server/experiment_server.go`
  canAccessExperiment, lines 341-368), and every create or list is
  authorized in it (lines 98-111, 215-234).
- Runs and recurring runs take their namespace from their experiment,
  which is required; a body naming another namespace is refused
  (`resource_manager.go` GetValidExperimentNamespacePair, lines 2490-2518;
  `server/run_server.go` createRun, lines 138-161, listRuns, lines 217-251;
  `server/job_server.go` createJob, lines 97-121, listJobs, lines 181-215).
- Pipelines may be a namespace's or shared (no namespace). Uploading one
  is authorized in its namespace, and a shared one, or a version of one,
  not at all (`server/pipeline_upload_server.go` lines 118-138, 290-312 and
  canUploadVersionedPipeline, lines 387-421; a refusal is HTTP 400 "Failed
  to create a pipeline", line 136). Reading a shared one is anyone's; from
  2.17.0 deleting one, or its version, is authorized in the KFP namespace,
  `kubeflow` (`server/pipeline_server.go` canAccessPipeline, lines
  1290-1306, with deletePipeline, lines 604-620, and
  deletePipelineVersion, lines 1079-1094); before, it was anyone's
  (@2.5.0 lines 1030-1033, @2.16.0 lines 1095-1098).
"""

import cgi
import datetime
import http.server
import io
import itertools
import json
import re
import threading
import urllib.parse
from typing import Dict, Optional, Set, Tuple

import kfp_server_api
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

API = "/apis/v2beta1"
# int64 fields: the generated models type them `str` (proto3 JSON's usual
# form), and the server's JSON parser takes a number as well, which is what
# kfp.Client sends.
INT64_FIELDS = ("max_concurrency", "interval_second")
_ids = itertools.count(1)


def problems(value, type_name: str, where: str = "body") -> list:
  """Where `value` does not conform to the kfp_server_api type `type_name`."""
  if value is None:
    return []
  simple = {"str": str, "bool": bool, "int": int, "float": (int, float),
            "datetime": str, "object": object}
  if type_name == "str" and where.rsplit(".", 1)[-1] in INT64_FIELDS:
    ok = isinstance(value, int) or (isinstance(value, str) and value.isdigit())
    return [] if ok else [f"{where}: expected an int64, found {value!r}"]
  if type_name in simple:
    ok = isinstance(value, simple[type_name]) and not (
        type_name == "int" and isinstance(value, bool))
    return [] if ok else [f"{where}: expected {type_name}, found {value!r}"]
  match = re.fullmatch(r"list\[(.+)\]", type_name)
  if match:
    if not isinstance(value, list):
      return [f"{where}: expected a list, found {value!r}"]
    return [p for i, v in enumerate(value) for p in problems(v, match[1], f"{where}[{i}]")]
  match = re.fullmatch(r"dict\(str, (.+)\)", type_name)
  if match:
    if not isinstance(value, dict):
      return [f"{where}: expected an object, found {value!r}"]
    return [p for k, v in value.items() for p in problems(v, match[1], f"{where}.{k}")]
  model = getattr(kfp_server_api.models, type_name)
  if not model.openapi_types:  # an enum
    allowed = [v for k, v in vars(model).items() if k.isupper() and isinstance(v, str)]
    return [] if value in allowed else [f"{where}: expected one of {allowed}, found {value!r}"]
  if not isinstance(value, dict):
    return [f"{where}: expected a {type_name} object, found {value!r}"]
  fields = {json_key: model.openapi_types[attr] for attr, json_key in model.attribute_map.items()}
  found = [f"{where}.{k}: not a field of {type_name}" for k in value if k not in fields]
  return found + [p for k, v in value.items() if k in fields
                  for p in problems(v, fields[k], f"{where}.{k}")]


class ApiError(Exception):
  def __init__(self, status: int, message: str, code: int = 3):
    super().__init__(message)
    self.status, self.message, self.code = status, message, code  # code: gRPC's


def _cron_ok(expression: str) -> bool:
  return bool(re.fullmatch(r"(@\w+( \S+)?)|(\S+( \S+){5})", expression or ""))


KFP_NAMESPACE = "kubeflow"  # the API server's own (common.GetPodNamespace)


class KfpState:
  """The server's memory: pipelines, versions, experiments, runs, schedules."""

  def __init__(self, multi_user: bool = False, version=(2, 17)):
    self.pipelines: Dict[str, dict] = {}
    self.versions: Dict[str, dict] = {}
    self.experiments: Dict[str, dict] = {}
    self.runs: Dict[str, dict] = {}
    self.recurring_runs: Dict[str, dict] = {}
    self.requests: list = []
    self.token: Optional[str] = None
    self.fail: Dict[str, int] = {}  # "METHOD path-prefix" -> status, once
    self.multi_user, self.version = multi_user, tuple(version)
    # Multi-user: bearer token -> (its user, the namespaces RBAC lets it act in).
    self.users: Dict[str, Tuple[str, Set[str]]] = {}

  @staticmethod
  def new_id() -> str:
    return f"id-{next(_ids)}"

  def versions_of(self, pipeline_id: str) -> list:
    return [v for v in self.versions.values() if v["pipeline_id"] == pipeline_id]

  def user(self, authorization: Optional[str]) -> Optional[Tuple[str, Set[str]]]:
    """Who asks, in multi-user mode (None otherwise)."""
    if not self.multi_user:
      return None
    found = self.users.get((authorization or "").removeprefix("Bearer "))
    if found is None:
      raise ApiError(401, "Failed to check authorization. User identity is empty in the "
                          "request header", 16)
    return found

  def authorize(self, user, verb: str, resource: str, namespace: str, why: str) -> None:
    """IsAuthorized: a SubjectAccessReview of `verb` on `resource` in `namespace`."""
    if user is None:
      return
    if not namespace:  # e.g. experiment_server.go@2.17.0 line 357
      noun = {"experiments": "An experiment", "runs": "A run", "jobs": "A recurring run"}
      raise ApiError(400, f"{why}: {noun.get(resource, 'A resource')} cannot have an empty "
                          f"namespace in multi-user mode")
    name, allowed = user
    if namespace not in allowed:
      raise ApiError(403, f"{why}: User '{name}' is not authorized with reason: no RBAC "
                          f"policy matched (request: verb {verb}, resource {resource}, "
                          f"namespace {namespace}): Unauthorized access", 7)

  def experiment_namespace(self, user, body: dict, what: str) -> str:
    """GetValidExperimentNamespacePair, for a run or a recurring run."""
    if user is None:
      return ""
    experiment = self.experiments.get(body.get("experiment_id") or "")
    if experiment is None:
      raise ApiError(400, f"Failed to create a {what}: Experiment id can not be empty in "
                          f"multi-user mode")
    if body.get("namespace") and body["namespace"] != experiment["namespace"]:
      raise ApiError(400, f"Experiment {experiment['experiment_id']} belongs to namespace "
                          f"'{experiment['namespace']}' instead of '{body['namespace']}'")
    return experiment["namespace"]

  def may_write_pipeline(self, user, pipeline_id: str, verb: str, why: str) -> None:
    """canAccessPipeline for a write: a shared pipeline's in the KFP
    namespace from 2.17.0, anyone's before."""
    namespace = self.pipelines.get(pipeline_id, {}).get("namespace", "")
    if namespace:
      self.authorize(user, verb, "pipelines", namespace, why)
    elif self.version >= (2, 17):
      self.authorize(user, verb, "pipelines", KFP_NAMESPACE,
                     f"{why}: Failed to access shared pipeline {pipeline_id}. Check if you "
                     f"have permission to {verb} shared pipelines")


def _filter_name(query: dict) -> Optional[str]:
  if "filter" not in query:
    return None
  predicates = json.loads(query["filter"][0])["predicates"]
  return [p["string_value"] if "string_value" in p else p["stringValue"]
          for p in predicates if p["key"] in ("display_name", "name")][0]


class Handler(http.server.BaseHTTPRequestHandler):
  state: KfpState

  def log_message(self, *args):  # keep test output clean
    pass

  def _send(self, status: int, body: dict) -> None:
    data = json.dumps(body).encode()
    self.send_response(status)
    self.send_header("Content-Type", "application/json")
    self.send_header("Content-Length", str(len(data)))
    self.end_headers()
    self.wfile.write(data)

  def _handle(self, method: str) -> None:
    url = urllib.parse.urlsplit(self.path)
    query = urllib.parse.parse_qs(url.query)
    length = int(self.headers.get("Content-Length") or 0)
    raw = self.rfile.read(length) if length else b""
    self.state.requests.append((method, url.path))
    try:
      if self.state.token and self.headers.get("Authorization") != f"Bearer {self.state.token}":
        raise ApiError(401, "Unauthenticated: bad or missing bearer token")
      for key, status in list(self.state.fail.items()):
        if f"{method} {url.path}".startswith(key):
          del self.state.fail[key]
          raise ApiError(status, "injected failure")
      self._send(200, self._route(method, url.path, query, raw))
    except ApiError as e:
      self._send(e.status, {"error": e.message, "code": e.code, "message": e.message})

  @property
  def user(self):
    """Who asks, looked up by the calls that authorize (healthz does not)."""
    return self.state.user(self.headers.get("Authorization"))

  def do_GET(self):
    self._handle("GET")

  def do_POST(self):
    self._handle("POST")

  def do_DELETE(self):
    self._handle("DELETE")

  def _body(self, raw: bytes, model: str) -> dict:
    body = json.loads(raw or b"{}")
    found = problems(body, model)
    if found:
      raise ApiError(400, "; ".join(found))
    return body

  def _upload(self, raw: bytes) -> dict:
    form = cgi.FieldStorage(fp=io.BytesIO(raw), headers=self.headers,
                            environ={"REQUEST_METHOD": "POST"})
    text = form["uploadfile"].file.read()
    try:
      # The pipeline spec, and the Kubernetes platform config if compiled with one.
      spec, *platform = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d]
      json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
      for document in platform:
        json_format.ParseDict(document, pipeline_spec_pb2.PlatformSpec())
    except Exception as e:  # noqa: BLE001  (any parse failure is the client's fault: 400)
      raise ApiError(400, f"not a pipeline spec: {e}") from None
    return spec

  def _route(self, method: str, path: str, query: dict, raw: bytes) -> dict:
    s = self.state
    parts = path[len(API):].strip("/").split("/") if path.startswith(API) else []
    head = parts[0] if parts else ""
    if method == "GET" and head == "healthz":
      # Its version as the image's TAG_NAME (backend/src/apiserver/main.go
      # @2.17.0 lines 465-491, 510-512; @2.15.0 line 364; @2.16.0 line 383).
      return {"commit_sha": "unknown", "multi_user": s.multi_user,
              "tag_name": ".".join(map(str, s.version)) + ".0"}
    if head == "pipelines":
      return self._pipelines(method, parts, query, raw)
    if head == "experiments":
      if method == "POST":
        body = self._body(raw, "V2beta1Experiment")
        s.authorize(self.user, "create", "experiments", body.get("namespace", ""),
                    "Failed to authorize the request")
        experiment = {**body, "experiment_id": s.new_id(), "storage_state": "AVAILABLE"}
        s.experiments[experiment["experiment_id"]] = experiment
        return experiment
      name, namespace = _filter_name(query), (query.get("namespace") or [""])[0]
      s.authorize(self.user, "list", "experiments", namespace, "Failed to authorize with API")
      return {"experiments": [e for e in s.experiments.values()
                              if name in (None, e["display_name"]) and
                              (self.user is None or e.get("namespace") == namespace)]}
    if head == "runs" and method == "POST":
      body = self._body(raw, "V2beta1Run")
      version = self._version_of(body)
      namespace = s.experiment_namespace(self.user, body, "run")
      s.authorize(self.user, "create", "runs", namespace, "Failed to create a run due to "
                  f"authorization error. Check if you have write permissions to namespace "
                  f"{namespace}")
      self._check_params(version, body)
      run = {**body, "run_id": s.new_id(), "state": "PENDING",
             "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat()}
      s.runs[run["run_id"]] = run
      return run
    if head == "runs" and method == "GET" and len(parts) == 1:
      # ListRuns: newest first for sort_by "created_at desc"; one page here.
      experiment = (query.get("experiment_id") or [None])[0]
      self._authorize_list("runs", experiment, query)
      found = [r for r in s.runs.values() if experiment in (None, r.get("experiment_id"))]
      descending = (query.get("sort_by") or [""])[0].endswith(" desc")
      found.sort(key=lambda r: r["created_at"], reverse=descending)
      size = int((query.get("page_size") or ["10"])[0])
      return {"runs": found[:size], "total_size": len(found)}
    if head == "recurringruns":
      return self._recurring(method, parts, query, raw)
    raise ApiError(404, f"no route {method} {path}")

  def _authorize_list(self, resource: str, experiment_id: Optional[str], query: dict) -> None:
    """listRuns, listJobs: the namespace the experiment's, else the query's."""
    namespace = (self.state.experiments.get(experiment_id or "", {}).get("namespace")
                 or (query.get("namespace") or [""])[0])
    self.state.authorize(self.user, "list", resource, namespace, f"Failed to list {resource} "
                         f"due to authorization error. Check if you have permission to "
                         f"access namespace {namespace}")

  def _version_of(self, body: dict) -> dict:
    ref = body.get("pipeline_version_reference") or {}
    version = self.state.versions.get(ref.get("pipeline_version_id"))
    if not version or version["pipeline_id"] != ref.get("pipeline_id"):
      raise ApiError(400, f"no pipeline version {ref}")
    if not body.get("display_name"):
      raise ApiError(400, "display_name is required")
    return version

  @staticmethod
  def _check_params(version: dict, body: dict) -> None:
    declared = version["pipeline_spec"]["root"].get("inputDefinitions", {}).get("parameters", {})
    given = (body.get("runtime_config") or {}).get("parameters") or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
      raise ApiError(400, f"parameters not declared by the pipeline: {unknown}")

  def _pipelines(self, method, parts, query, raw) -> dict:
    s = self.state
    # Single-user: every pipeline is shared (ReplaceNamespace, resource_manager.go
    # lines 2456-2462).
    namespace = (query.get("namespace") or [""])[0] if s.multi_user else ""
    if method == "GET" and len(parts) == 1:
      name = _filter_name(query)
      if namespace:  # a shared one is anyone's to read
        s.authorize(self.user, "list", "pipelines", namespace, "Failed to list pipelines")
      return {"pipelines": [p for p in s.pipelines.values() if name in (None, p["display_name"])
                            and p.get("namespace", "") == namespace]}
    if method == "POST" and parts[1:] == ["upload"]:
      spec = self._upload(raw)
      if namespace:
        self._may_upload(namespace)
      name = (query.get("name") or query.get("display_name"))[0]
      if any(p["display_name"] == name and p.get("namespace", "") == namespace
             for p in s.pipelines.values()):
        raise ApiError(409, f"pipeline {name!r} exists")
      pipeline = {"pipeline_id": s.new_id(), "display_name": name,
                  **({"namespace": namespace} if namespace else {})}
      s.pipelines[pipeline["pipeline_id"]] = pipeline
      self._add_version(pipeline["pipeline_id"], name, spec)
      return pipeline
    if method == "POST" and parts[1:] == ["upload_version"]:
      spec = self._upload(raw)
      pipeline_id = query["pipelineid"][0]
      if pipeline_id not in s.pipelines:
        raise ApiError(404, f"no pipeline {pipeline_id}")
      if s.pipelines[pipeline_id].get("namespace"):
        self._may_upload(s.pipelines[pipeline_id]["namespace"])
      return self._add_version(pipeline_id, query["name"][0], spec)
    pipeline_id = parts[1]
    owner = s.pipelines.get(pipeline_id, {}).get("namespace", "")
    if method == "GET" and parts[2:] == ["versions"]:
      if owner:
        s.authorize(self.user, "list", "pipelines", owner, "Failed to list pipeline versions")
      return {"pipeline_versions": s.versions_of(pipeline_id)}
    if method == "DELETE" and len(parts) == 4:
      s.may_write_pipeline(self.user, pipeline_id, "delete",
                           f"Failed to delete a pipeline version id {parts[3]} due to "
                           f"authorization error for pipeline id {pipeline_id}")
      s.versions.pop(parts[3])
      return {}
    if method == "DELETE" and len(parts) == 2:
      s.may_write_pipeline(self.user, pipeline_id, "delete", "Failed to delete a pipeline "
                           f"due authorization error for pipeline id {pipeline_id}")
      if s.versions_of(pipeline_id):
        raise ApiError(400, "pipeline still has versions")
      s.pipelines.pop(pipeline_id)
      return {}
    raise ApiError(404, f"no route {method} {parts}")

  def _may_upload(self, namespace: str) -> None:
    """canUploadVersionedPipeline: its refusal is HTTP 400, said plainly."""
    try:
      self.state.authorize(self.user, "create", "pipelines", namespace, "Authorization Failure")
    except ApiError as e:
      if e.status != 403:
        raise
      raise ApiError(400, "Failed to create a pipeline") from None

  def _add_version(self, pipeline_id: str, name: str, spec: dict) -> dict:
    version = {"pipeline_id": pipeline_id, "pipeline_version_id": self.state.new_id(),
               "display_name": name, "pipeline_spec": spec}
    self.state.versions[version["pipeline_version_id"]] = version
    return version

  def _recurring(self, method, parts, query, raw) -> dict:
    s = self.state
    if method == "POST" and len(parts) == 1:
      body = self._body(raw, "V2beta1RecurringRun")
      version = self._version_of(body)
      namespace = s.experiment_namespace(self.user, body, "recurring run")
      s.authorize(self.user, "create", "jobs", namespace, "Failed to create a recurring run "
                  "due to authorization error. Check if you have write permission to "
                  f"namespace {namespace}")
      self._check_params(version, body)
      cron = ((body.get("trigger") or {}).get("cron_schedule") or {}).get("cron")
      if not _cron_ok(cron):
        raise ApiError(400, f"invalid cron {cron!r}")
      if not 1 <= int(body.get("max_concurrency") or "0") <= 10:
        raise ApiError(400, "max_concurrency must be in [1, 10]")
      run = {**body, "recurring_run_id": s.new_id(),
             **({"namespace": namespace} if namespace else {}),
             "status": "ENABLED" if body.get("mode") == "ENABLE" else "DISABLED"}
      s.recurring_runs[run["recurring_run_id"]] = run
      return run
    if method == "GET" and len(parts) == 1:
      experiment = (query.get("experiment_id") or [None])[0]
      self._authorize_list("jobs", experiment, query)
      return {"recurringRuns": [r for r in s.recurring_runs.values()
                                if experiment in (None, r["experiment_id"])]}
    run_id, _, action = parts[1].partition(":")
    if run_id not in s.recurring_runs:
      raise ApiError(404, f"no recurring run {run_id}")
    namespace = s.recurring_runs[run_id].get("namespace", "")  # canAccessJob
    s.authorize(self.user, {"DELETE": "delete", "GET": "get"}.get(method, "update"), "jobs",
                namespace, f"Failed to access recurring run {run_id}")
    if method == "POST" and action in ("enable", "disable"):
      s.recurring_runs[run_id]["status"] = "ENABLED" if action == "enable" else "DISABLED"
      return {}
    if method == "DELETE":
      s.recurring_runs.pop(run_id)
      return {}
    return s.recurring_runs[run_id]


def serve(multi_user: bool = False, version=(2, 17)) -> tuple:
  """Starts a server on a free port of 127.0.0.1; returns (url, state, stop).
  Multi-user, it answers as that backend version's (above); its users are
  `state.users`."""
  state = KfpState(multi_user, version)
  handler = type("BoundHandler", (Handler,), {"state": state})
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()

  def stop():
    server.shutdown()
    server.server_close()
  return f"http://127.0.0.1:{server.server_port}", state, stop

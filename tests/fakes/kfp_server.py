"""A STAND-IN Kubeflow Pipelines API server on 127.0.0.1, for contract tests.

No Kubeflow cluster can run here. This server implements the part of the
v2beta1 REST API that `python -m commands.kubeflow submit|schedule|schedules` call
through `kfp.Client`, keeps its state in memory, and checks every request
body against the `kfp_server_api` models installed with kfp: an unknown
field, a wrong type or a value outside an enum is answered with HTTP 400,
as is an uploaded file that is not a pipeline spec, a run parameter the
pipeline does not declare, or a cron expression the scheduler would refuse.
It tests the contract, not a cluster.
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
from typing import Dict, Optional

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
  def __init__(self, status: int, message: str):
    super().__init__(message)
    self.status, self.message = status, message


def _cron_ok(expression: str) -> bool:
  return bool(re.fullmatch(r"(@\w+( \S+)?)|(\S+( \S+){5})", expression or ""))


class KfpState:
  """The server's memory: pipelines, versions, experiments, runs, schedules."""

  def __init__(self):
    self.pipelines: Dict[str, dict] = {}
    self.versions: Dict[str, dict] = {}
    self.experiments: Dict[str, dict] = {}
    self.runs: Dict[str, dict] = {}
    self.recurring_runs: Dict[str, dict] = {}
    self.requests: list = []
    self.token: Optional[str] = None
    self.fail: Dict[str, int] = {}  # "METHOD path-prefix" -> status, once

  @staticmethod
  def new_id() -> str:
    return f"id-{next(_ids)}"

  def versions_of(self, pipeline_id: str) -> list:
    return [v for v in self.versions.values() if v["pipeline_id"] == pipeline_id]


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
      self._send(e.status, {"error": e.message, "code": 3, "message": e.message})

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
      spec, *platform = [d for d in yaml.safe_load_all(text) if d]
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
      return {"multi_user": False}
    if head == "pipelines":
      return self._pipelines(method, parts, query, raw)
    if head == "experiments":
      if method == "POST":
        body = self._body(raw, "V2beta1Experiment")
        experiment = {**body, "experiment_id": s.new_id(), "storage_state": "AVAILABLE"}
        s.experiments[experiment["experiment_id"]] = experiment
        return experiment
      name = _filter_name(query)
      return {"experiments": [e for e in s.experiments.values()
                              if name in (None, e["display_name"])]}
    if head == "runs" and method == "POST":
      body = self._body(raw, "V2beta1Run")
      version = self._version_of(body)
      self._check_params(version, body)
      run = {**body, "run_id": s.new_id(), "state": "PENDING",
             "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat()}
      s.runs[run["run_id"]] = run
      return run
    if head == "runs" and method == "GET" and len(parts) == 1:
      # ListRuns: newest first for sort_by "created_at desc"; one page here.
      experiment = (query.get("experiment_id") or [None])[0]
      found = [r for r in s.runs.values() if experiment in (None, r.get("experiment_id"))]
      descending = (query.get("sort_by") or [""])[0].endswith(" desc")
      found.sort(key=lambda r: r["created_at"], reverse=descending)
      size = int((query.get("page_size") or ["10"])[0])
      return {"runs": found[:size], "total_size": len(found)}
    if head == "recurringruns":
      return self._recurring(method, parts, query, raw)
    raise ApiError(404, f"no route {method} {path}")

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
    if method == "GET" and len(parts) == 1:
      name = _filter_name(query)
      return {"pipelines": [p for p in s.pipelines.values() if name in (None, p["display_name"])]}
    if method == "POST" and parts[1:] == ["upload"]:
      spec = self._upload(raw)
      name = (query.get("name") or query.get("display_name"))[0]
      if any(p["display_name"] == name for p in s.pipelines.values()):
        raise ApiError(409, f"pipeline {name!r} exists")
      pipeline = {"pipeline_id": s.new_id(), "display_name": name}
      s.pipelines[pipeline["pipeline_id"]] = pipeline
      self._add_version(pipeline["pipeline_id"], name, spec)
      return pipeline
    if method == "POST" and parts[1:] == ["upload_version"]:
      spec = self._upload(raw)
      pipeline_id = query["pipelineid"][0]
      if pipeline_id not in s.pipelines:
        raise ApiError(404, f"no pipeline {pipeline_id}")
      return self._add_version(pipeline_id, query["name"][0], spec)
    pipeline_id = parts[1]
    if method == "GET" and parts[2:] == ["versions"]:
      return {"pipeline_versions": s.versions_of(pipeline_id)}
    if method == "DELETE" and len(parts) == 4:
      s.versions.pop(parts[3])
      return {}
    if method == "DELETE" and len(parts) == 2:
      if s.versions_of(pipeline_id):
        raise ApiError(400, "pipeline still has versions")
      s.pipelines.pop(pipeline_id)
      return {}
    raise ApiError(404, f"no route {method} {parts}")

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
      self._check_params(version, body)
      cron = ((body.get("trigger") or {}).get("cron_schedule") or {}).get("cron")
      if not _cron_ok(cron):
        raise ApiError(400, f"invalid cron {cron!r}")
      if not 1 <= int(body.get("max_concurrency") or "0") <= 10:
        raise ApiError(400, "max_concurrency must be in [1, 10]")
      run = {**body, "recurring_run_id": s.new_id(),
             "status": "ENABLED" if body.get("mode") == "ENABLE" else "DISABLED"}
      s.recurring_runs[run["recurring_run_id"]] = run
      return run
    if method == "GET" and len(parts) == 1:
      experiment = (query.get("experiment_id") or [None])[0]
      return {"recurringRuns": [r for r in s.recurring_runs.values()
                                if experiment in (None, r["experiment_id"])]}
    run_id, _, action = parts[1].partition(":")
    if run_id not in s.recurring_runs:
      raise ApiError(404, f"no recurring run {run_id}")
    if method == "POST" and action in ("enable", "disable"):
      s.recurring_runs[run_id]["status"] = "ENABLED" if action == "enable" else "DISABLED"
      return {}
    if method == "DELETE":
      s.recurring_runs.pop(run_id)
      return {}
    return s.recurring_runs[run_id]


def serve() -> tuple:
  """Starts a server on a free port of 127.0.0.1; returns (url, state, stop)."""
  state = KfpState()
  handler = type("BoundHandler", (Handler,), {"state": state})
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()

  def stop():
    server.shutdown()
    server.server_close()
  return f"http://127.0.0.1:{server.server_port}", state, stop

"""A STAND-IN Kubernetes API server on 127.0.0.1, for the training launcher's tests.

No Kubernetes control plane runs here. This serves the part of the API that
trainer/jobs/ calls through the real `kubernetes` client (given a KUBECONFIG
that points here): create, get, list, watch and delete of custom objects
(TrainJob, TrainingRuntime, TFJob, Argo's Workflow), and get, list and logs
of pods. The engines' controllers that act on those objects are in
training_engines.py.

As the real API server does:
- objects get a uid, a creationTimestamp and a resourceVersion that grows
  with every change; a watch sends ADDED, MODIFIED and DELETED events after
  the resourceVersion asked for, filtered by `metadata.name`, until its
  timeoutSeconds;
- creating an existing name answers 409 AlreadyExists; a missing object
  404 NotFound; a resource type that is not installed 404 with "the server
  could not find the requested resource";
- a verb the caller's role does not grant answers 403 Forbidden, naming the
  verb, the resource and its API group: a listed (verb, resource) pair
  (`forbid`), or, with `rbac` on, what the Roles and bindings in the store
  do not grant the token's service account (rbac.py);
- `fieldValidation=Strict` answers 400 naming an unknown field, and a
  TrainJob or TFJob its release's CRD refuses answers 422 in the API
  server's words (crd_schemas.py: the CRD files of Trainer 2.0, 2.1, 2.2
  and 2.3 and the Training Operator's release-1.9);
- deleting an object deletes what names it in an ownerReference (garbage
  collection, background propagation);
- discovery: `GET /apis/GROUP/VERSION` lists what that group version
  serves, to any caller (discovery.py);
- a SubjectAccessReview is answered by the RBAC stand-in for the service
  account it names, and not stored (rbac.py `review`);
- with "secrets" installed, a Secret of `Store.secrets` (the pods' own) is
  read as the API serves it: its values base64 in `data`;
- a CustomResourceDefinition (cluster-scoped, `GET /apis/apiextensions.k8s.io/
  v1/customresourcedefinitions/NAME`) is the file of the release the store
  runs (crd_schemas.py), for each engine or KServe installed; an uninstalled
  one is 404 (kubernetes@v1.31.0 staging/src/k8s.io/apiextensions-apiserver/
  pkg/apis/apiextensions/v1/types.go, type CustomResourceDefinition);
- nodes (cluster-scoped, `GET /api/v1/nodes`) are the store's objects under
  ("v1", "", "nodes", name), as the API serves them: `metadata.labels`,
  `spec.taints` (key, value, effect) and `status.allocatable`, a map of
  resource name to quantity such as `"nvidia.com/gpu": "4"` (kubernetes@
  v1.31.0 staging/src/k8s.io/api/core/v1/types.go Node, NodeSpec.Taints,
  NodeStatus.Allocatable; a device plugin advertises `nvidia.com/gpu`).
  `Store` serves both, as every cluster does.

- a TrainJob the Trainer's validating webhook refuses answers 403 with
  its message (admission.py: the rules modelled, and not); an
  InferenceService, KServe's webhooks (kserve.py), on create and on update,
  v0.20.0's or, with `kserve_version` "0.15", v0.15.2's (kserve_versions.py);
- an update (PUT) names the resourceVersion it read: another answers 409
  Conflict, none 422; a merge patch (PATCH, `application/merge-patch+json`)
  needs none; both keep the object's identity and status (a status
  subresource) and count a new spec as a new `metadata.generation`;
- an update or patch with `dryRun=All` is authorized, decoded, admitted
  (webhooks with `sideEffects: None`, as KServe's are) and answered, but not
  stored, and no controller sees it (apiserver's registry/generic/registry/
  dryrun.go: DryRunnableStorage skips the write).

Not modelled: authentication (a token names its account), the other
admission webhooks, server-side apply, JSON and strategic-merge patches,
finalizers holding a deletion, pagination.
"""

import base64
import datetime
import http.server
import itertools
import json
import re
import threading
import urllib.parse
import uuid
from typing import Callable, Dict, List, Optional, Set, Tuple

from tests.fakes import admission, crd_schemas, discovery, rbac

Key = Tuple[str, str, str, str]  # (api prefix, namespace, plural, name)
PATH = re.compile(r"^/(?:api/v1|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
                  r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)"
                  r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>log|status))?$")


def now() -> str:
  return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status(code: int, reason: str, message: str) -> dict:
  return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": message, "reason": reason, "code": code}


class Store:
  """Objects by key, every change numbered, and who waits for changes."""

  def __init__(self, installed: Set[str], trainer_version: str = "2.2",
               kserve_version: str = "0.20"):
    # plurals this cluster serves; these every cluster does.
    self.installed = set(installed) | {"pods", "subjectaccessreviews", "nodes",
                                       "customresourcedefinitions", "serviceaccounts"}
    self.trainer_version = trainer_version
    self.kserve_version = kserve_version  # a key of kserve_versions.RELEASES
    self.objects: Dict[Key, dict] = {}
    self.events: List[Tuple[int, str, Key, dict]] = []
    self.forbidden: Set[Tuple[str, str]] = set()  # (verb, plural)
    self.rbac = False  # on: each request as its token's service account (rbac.py)
    self.secrets: Dict[str, Dict[str, str]] = {}  # name -> key -> value, for pods' env
    self.created: Dict[str, List[str]] = {}  # plural -> names, every create
    self.logs: Dict[Tuple[str, str], Callable[[], Tuple[str, bool]]] = {}
    self._version = itertools.count(1)
    self.lock = threading.Condition()
    self.on_delete: List[Callable[[Key, dict], None]] = []
    self.after_write: List[Callable[[Key], None]] = []

  def forbid(self, verb: str, plural: str) -> None:
    self.forbidden.add((verb, plural))

  def put(self, key: Key, obj: dict, event: str) -> dict:
    with self.lock:
      meta = obj.setdefault("metadata", {})
      meta["resourceVersion"] = str(next(self._version))
      self.objects[key] = obj
      self.events.append((int(meta["resourceVersion"]), event, key, json.loads(json.dumps(obj))))
      self.lock.notify_all()
    return obj

  def create(self, key: Key, obj: dict) -> dict:
    meta = obj.setdefault("metadata", {})
    meta.update(name=key[3], uid=str(uuid.uuid4()), creationTimestamp=now())
    if key[1]:
      meta["namespace"] = key[1]
    self.created.setdefault(key[2], []).append(key[3])
    return self.put(key, obj, "ADDED")

  def update(self, key: Key, change: Callable[[dict], None]) -> Optional[dict]:
    with self.lock:
      obj = self.objects.get(key)
      if obj is None:
        return None
      change(obj)
      return self.put(key, obj, "MODIFIED")

  def delete(self, key: Key) -> Optional[dict]:
    with self.lock:
      obj = self.objects.pop(key, None)
      if obj is None:
        return None
      obj["metadata"]["resourceVersion"] = str(next(self._version))
      self.events.append((int(obj["metadata"]["resourceVersion"]), "DELETED", key, obj))
      self.lock.notify_all()
    for hook in self.on_delete:
      hook(key, obj)
    # Garbage collection: what this object owned goes too.
    uid = obj["metadata"].get("uid")
    owned = [k for k, o in list(self.objects.items())
             if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences", []))]
    for k in owned:
      self.delete(k)
    return obj

  def get(self, key: Key) -> Optional[dict]:
    with self.lock:
      obj = self.objects.get(key)
      return json.loads(json.dumps(obj)) if obj else None

  def list(self, prefix: str, ns: str, plural: str) -> List[dict]:
    with self.lock:
      return [json.loads(json.dumps(o)) for k, o in sorted(self.objects.items())
              if k[:3] == (prefix, ns, plural)]


def selected(obj: dict, labels: str, fields: str) -> bool:
  have = obj["metadata"].get("labels", {})
  for term in filter(None, labels.split(",")):
    k, _, v = term.partition("=")
    if have.get(k) != v:
      return False
  for term in filter(None, fields.split(",")):
    k, _, v = term.partition("=")
    if k == "metadata.name" and obj["metadata"]["name"] != v:
      return False
  return True


RELEASE = {"trainjobs": lambda store: store.trainer_version, "tfjobs": lambda store: "1.9",
           "inferenceservices": lambda store: store.kserve_version}
KINDS = {"trainjobs": "TrainJob.trainer.kubeflow.org", "tfjobs": "TFJob.kubeflow.org",
         "inferenceservices": "InferenceService.serving.kserve.io"}


def installed_crd(store: Store, name: str) -> Optional[dict]:
  """The CRD `name` (`<plural>.<group>`) of the release the store runs, if installed."""
  for plural, release in RELEASE.items():
    found = crd_schemas.crd(plural, release(store)) if plural in store.installed else None
    if found and found["metadata"]["name"] == name:
      return json.loads(json.dumps(found))
  return None


def strict_problems(store: Store, plural: str, body: dict) -> List[str]:
  """Strict decoding's unknown fields, from the release's CRD (crd_schemas.py)."""
  if plural not in RELEASE:
    return []
  return crd_schemas.problems(plural, RELEASE[plural](store), body)["unknown"]


class Handler(http.server.BaseHTTPRequestHandler):
  store: Store  # set by `serve`

  def log_message(self, *args):  # quiet
    pass

  def _send(self, code: int, body: dict) -> None:
    data = json.dumps(body).encode()
    self.send_response(code)
    self.send_header("Content-Type", "application/json")
    self.send_header("Content-Length", str(len(data)))
    self.end_headers()
    self.wfile.write(data)

  def _route(self, verb: str):
    url = urllib.parse.urlparse(self.path)
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
    if verb == "get" and discovery.PATH.match(url.path):
      served = discovery.resource_list(url.path, self.store.installed)
      return self._send(200, served) if served else self._send(404, status(
          404, "NotFound", "the server could not find the requested resource"))
    match = PATH.match(url.path)
    if not match:
      return self._send(404, status(404, "NotFound", "the server could not find the "
                                                     "requested resource"))
    group, plural, ns, name, sub = (match["group"] or "", match["plural"], match["ns"] or "",
                                    match["name"], match["sub"])
    prefix = f"{group}/{match['version']}" if group else "v1"
    if plural not in self.store.installed:
      return self._send(404, status(404, "NotFound", "the server could not find the "
                                                     "requested resource"))
    if query.get("watch") in ("true", "True", "1"):
      verb = "watch"
    elif verb == "get" and not name:
      verb = "list"
    account = rbac.account_of((self.headers.get("Authorization") or "")[len("Bearer "):])
    refused = (verb, plural) in self.store.forbidden or (self.store.rbac and not (
        account and rbac.allowed(self.store, account, verb, group,
                                 plural + ("/log" if sub == "log" else ""), ns, name or "")))
    if refused:
      # The authorizer's words (apiserver's forbidden message):
      # `pods "x" is forbidden: User "..." cannot get resource "pods/log" ...`.
      user = f"{account[0]}:{account[1]}" if account else f"{ns}:pipeline-runner"
      resource = f"{plural}.{group}" if group else plural
      kind = plural + ("/log" if sub == "log" else "")
      return self._send(403, status(403, "Forbidden", (
          f'{resource}{f" {chr(34)}{name}{chr(34)}" if name else ""} is forbidden: User '
          f'"system:serviceaccount:{user}" cannot {verb} resource "{kind}" '
          f'in API group "{group}" in the namespace "{ns}"')))
    key = (prefix, ns, plural, name or "")
    if sub == "log":
      return self._log(key, query)
    getattr(self, f"_{verb}")(key, query)

  def do_GET(self):
    self._route("get")

  def do_POST(self):
    self._route("create")

  def do_DELETE(self):
    self._route("delete")

  def do_PUT(self):
    self._route("update")

  def do_PATCH(self):
    self._route("patch")

  def _body(self) -> dict:
    length = int(self.headers.get("Content-Length") or 0)
    return json.loads(self.rfile.read(length) or b"{}")

  def _get(self, key: Key, query) -> None:
    obj = self.store.get(key)
    if obj is None and key[2] == "customresourcedefinitions":
      obj = installed_crd(self.store, key[3])
    if obj is None and key[2] == "secrets" and key[3] in self.store.secrets:
      obj = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
             "metadata": {"name": key[3], "namespace": key[1]},
             "data": {k: base64.b64encode(v.encode()).decode()
                      for k, v in self.store.secrets[key[3]].items()}}
    if obj is None:
      return self._send(404, status(404, "NotFound", f'{key[2]} "{key[3]}" not found'))
    self._send(200, obj)

  def _list(self, key: Key, query) -> None:
    items = [o for o in self.store.list(*key[:3])
             if selected(o, query.get("labelSelector", ""), query.get("fieldSelector", ""))]
    with self.store.lock:
      version = str(self.store.events[-1][0]) if self.store.events else "0"
    self._send(200, {"kind": "List", "apiVersion": key[0], "items": items,
                     "metadata": {"resourceVersion": version}})

  def _refused(self, key: Key, query, body: dict, old: Optional[dict] = None) -> bool:
    """Answers, and True, when strict decoding, the CRD or a webhook refuses
    `body` (`old`: the object it would replace)."""
    name = key[3]
    if query.get("fieldValidation") == "Strict":
      problems = strict_problems(self.store, key[2], body)
      if problems:  # apiserver's transformDecodeError
        kind, version = body.get("kind", ""), body.get("apiVersion", "").rsplit("/", 1)[-1]
        self._send(400, status(400, "BadRequest", (
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding '
            f'error: ' + ", ".join(problems))))
        return True
    admission.mutate(key[2], body, self.store.kserve_version)  # then the mutating webhooks
    if key[2] in RELEASE:  # the CRD's schema and CEL rules, then the webhooks
      wrong = crd_schemas.problems(key[2], RELEASE[key[2]](self.store), body)["invalid"]
      if wrong:
        text = wrong[0] if len(wrong) == 1 else f"[{', '.join(wrong)}]"
        self._send(422, status(422, "Invalid", f'{KINDS[key[2]]} "{name}" is invalid: {text}'))
        return True
    refused = admission.problems(self.store.trainer_version, key[2], body, old,
                                 self.store.kserve_version)
    if key[2] == "trainjobs":  # ValidateObjects, at every release from 2.0
      ref = body.get("spec", {}).get("runtimeRef", {})
      plural = "clustertrainingruntimes" if ref.get("kind") == "ClusterTrainingRuntime" \
          else "trainingruntimes"
      runtime = self.store.get(("trainer.kubeflow.org/v1alpha1", key[1] if plural ==
                                "trainingruntimes" else "", plural, ref.get("name", "")))
      if runtime is None:
        refused = [admission.missing_runtime(ref, plural)]  # ValidateObjects stops there
      else:
        refused += admission.override_problems(body, runtime)
    if refused:  # controller-runtime's Denied: 403, the errors aggregated
      text = refused[0] if len(refused) == 1 else f"[{', '.join(refused)}]"
      self._send(403, status(403, "Forbidden", (
          f'admission webhook "{admission.WEBHOOKS[key[2]]}" denied the request: {text}')))
      return True
    return False

  def _create(self, key: Key, query) -> None:
    body = self._body()
    if key[2] == "subjectaccessreviews":
      return self._send(201, rbac.review(self.store, body, self.store.forbidden))
    name = body.get("metadata", {}).get("name", "")
    key = key[:3] + (name,)
    if self._refused(key, query, body):
      return
    if self.store.get(key) is not None:
      return self._send(409, status(409, "AlreadyExists",
                                    f'{key[2]} "{name}" already exists'))
    body.setdefault("metadata", {})["generation"] = 1
    body.pop("status", None)  # a status subresource's: not taken on create
    self._send(201, self.store.create(key, body))
    self._written(key)

  def _written(self, key: Key) -> None:
    for hook in self.store.after_write:  # controllers that reconcile on a change
      hook(key)

  def _update(self, key: Key, query) -> None:
    """PUT: the whole object replaced, at the resourceVersion it was read at
    (a custom resource allows no unconditional update: apiextensions-apiserver
    customresource strategy AllowUnconditionalUpdate false)."""
    self._replace(key, query, lambda old: self._body(), conditional=True)

  def _patch(self, key: Key, query) -> None:
    """PATCH, `application/merge-patch+json` (RFC 7386: null deletes)."""
    if self.headers.get("Content-Type", "").split(";")[0] != "application/merge-patch+json":
      return self._send(415, status(415, "UnsupportedMediaType", "the body of the request "
                                    "was in an unknown format - accepted media types "
                                    "include: application/merge-patch+json"))
    change = self._body()
    self._replace(key, query, lambda old: merge_patch(old, change), conditional=False)

  def _replace(self, key: Key, query, new_of: Callable[[dict], dict], conditional: bool):
    old = self.store.get(key)
    if old is None:
      return self._send(404, status(404, "NotFound", f'{key[2]} "{key[3]}" not found'))
    body = new_of(json.loads(json.dumps(old)))
    version = body.get("metadata", {}).get("resourceVersion", "")
    resource = f"{key[2]}.{key[0].split('/')[0]}" if "/" in key[0] else key[2]
    if conditional and not version:
      return self._send(422, status(422, "Invalid", f'{KINDS.get(key[2], key[2])} "{key[3]}" '
                                    "is invalid: metadata.resourceVersion: Invalid value: "
                                    "0x0: must be specified for an update"))
    if version and version != old["metadata"]["resourceVersion"]:
      return self._send(409, status(409, "Conflict", (
          f'Operation cannot be fulfilled on {resource} "{key[3]}": the object has been '
          "modified; please apply your changes to the latest version and try again")))
    if self._refused(key, query, body, old):
      return
    # Identity and status are the server's (a status subresource: status
    # changes only through /status); a new spec is a new generation.
    for field in ("uid", "creationTimestamp", "name", "namespace"):
      if field in old["metadata"]:
        body["metadata"][field] = old["metadata"][field]
    if "status" in old:
      body["status"] = old["status"]
    generation = old["metadata"].get("generation", 1)
    body["metadata"]["generation"] = generation + (body.get("spec") != old.get("spec"))
    if query.get("dryRun") == "All":  # decoded, admitted, answered; never stored
      return self._send(200, body)
    self._send(200, self.store.update(key, lambda obj: (obj.clear(), obj.update(body))))
    self._written(key)

  def _delete(self, key: Key, query) -> None:
    obj = self.store.delete(key)
    if obj is None:
      return self._send(404, status(404, "NotFound", f'{key[2]} "{key[3]}" not found'))
    self._send(200, obj)

  def _stream_start(self) -> None:
    self.send_response(200)
    self.send_header("Content-Type", "application/json")
    self.send_header("Connection", "close")
    self.end_headers()

  def _watch(self, key: Key, query) -> None:
    since = int(query.get("resourceVersion") or 0)
    ends = threading.Event()
    threading.Timer(float(query.get("timeoutSeconds") or 30), ends.set).start()
    self._stream_start()
    fields = query.get("fieldSelector", "")
    labels = query.get("labelSelector", "")
    while not ends.is_set():
      with self.store.lock:
        new = [(v, t, k, o) for v, t, k, o in self.store.events
               if v > since and k[:3] == key[:3] and selected(o, labels, fields)]
        if not new:
          self.store.lock.wait(0.5)
          continue
      for version, kind, _, obj in new:
        since = version
        try:
          self.wfile.write((json.dumps({"type": kind, "object": obj}) + "\n").encode())
          self.wfile.flush()
        except OSError:
          return

  def _log(self, key: Key, query) -> None:
    source = self.store.logs.get((key[1], key[3]))
    if source is None:
      return self._send(404, status(404, "NotFound", f'pods "{key[3]}" not found'))
    text, done = source()
    if query.get("follow") not in ("true", "True", "1"):
      lines = text.splitlines(keepends=True)
      tail = int(query.get("tailLines") or 0)
      data = "".join(lines[-tail:] if tail else lines).encode()
      self.send_response(200)
      self.send_header("Content-Type", "text/plain")
      self.send_header("Content-Length", str(len(data)))
      self.end_headers()
      self.wfile.write(data)
      return
    self._stream_start()
    sent = 0
    while True:
      text, done = source()
      try:
        self.wfile.write(text[sent:].encode())
        self.wfile.flush()
      except OSError:
        return
      sent = len(text)
      if done:
        return
      threading.Event().wait(0.5)


def merge_patch(target, patch):
  """RFC 7386 JSON merge patch."""
  if not isinstance(patch, dict):
    return patch
  target = dict(target) if isinstance(target, dict) else {}
  for k, v in patch.items():
    if v is None:
      target.pop(k, None)
    else:
      target[k] = merge_patch(target.get(k), v)
  return target


def serve(store: Store) -> http.server.ThreadingHTTPServer:
  """Starts the server on a free port of 127.0.0.1, in a daemon thread."""
  handler = type("BoundHandler", (Handler,), {"store": store})
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
  server.daemon_threads = True
  threading.Thread(target=server.serve_forever, daemon=True).start()
  return server


def kubeconfig(server: http.server.ThreadingHTTPServer, namespace: str,
               account: str = "pipeline-runner") -> str:
  """A kubeconfig (YAML as JSON) naming this server, the token of the
  namespace's service account `account` and the namespace."""
  host = f"http://127.0.0.1:{server.server_address[1]}"
  return json.dumps({
      "apiVersion": "v1", "kind": "Config", "current-context": "stand-in",
      "clusters": [{"name": "stand-in", "cluster": {"server": host}}],
      "users": [{"name": "pipeline-runner", "user": rbac.tokens((namespace, account))}],
      "contexts": [{"name": "stand-in", "context": {
          "cluster": "stand-in", "user": "pipeline-runner", "namespace": namespace}}]})

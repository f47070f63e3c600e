"""Reaching a Kubernetes cluster as its clients do, and saying plainly what it lacks.

The `kubernetes` client (in the lock), not Kubeflow's SDK: that installs a
top-level package named `kubeflow`, which this project's own would shadow.
Inside a pod the client uses the pod's service account, elsewhere
`KUBECONFIG`; the namespace is the pod's own (or the kubeconfig context's).

What a caller meets from the cluster, each as one line (`explain`):
- a forbidden call: which verb on which resource, and the manifest that
  grants it (each caller's `Grants`);
- an API that is not installed: which, and what to install;
- an admission webhook's refusal, in its words.
The training launcher (trainer/jobs/kube.py) and the KServe deployer
(serving/kserve.py) each say what their calls need.
"""

import dataclasses
import json
import os
from typing import Callable

NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class ClusterError(RuntimeError):
  """What the cluster refused or lacks, in one line."""


@dataclasses.dataclass(frozen=True)
class Grants:
  """What to apply when the cluster refuses a caller's call, or lacks its API.

  Attributes:
    rbac: the manifest granting the step's service account its calls.
    profiles: the same, aggregated to every profile of a multi-user install.
    missing_api: what to install when the cluster does not serve the API.
  """
  rbac: str
  profiles: str
  missing_api: str


class Cluster:
  """The API clients and this pod's namespace."""

  def __init__(self, grants: Grants):
    from kubernetes import client, config
    self.grants = grants
    try:
      config.load_incluster_config()
      with open(NAMESPACE_FILE) as f:
        self.namespace = f.read().strip()
    except config.ConfigException:
      try:
        # KUBECONFIG as it is now: the client's default is read at its import.
        config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
      except (config.ConfigException, TypeError) as e:
        raise ClusterError(f"cannot reach a Kubernetes cluster: not in a pod, and "
                           f"KUBECONFIG ({os.environ.get('KUBECONFIG', '~/.kube/config')}) "
                           f"gives none: {e}") from None
      _, context = config.list_kube_config_contexts(os.environ.get("KUBECONFIG"))
      self.namespace = context.get("context", {}).get("namespace") or "default"
    self.custom = client.CustomObjectsApi()
    self.core = client.CoreV1Api()

  def call(self, what: str, fn: Callable, *args, missing_ok: bool = False, **kwargs):
    """fn(*args, **kwargs), with the API's refusals turned into one line;
    None for a missing object when `missing_ok`."""
    from kubernetes.client.exceptions import ApiException
    try:
      return fn(*args, **kwargs)
    except ApiException as e:
      # A missing object, not a missing kind of object (an API not installed).
      if e.status == 404 and missing_ok and b"could not find the requested resource" \
          not in (e.body if isinstance(e.body, bytes) else str(e.body or "").encode()):
        return None
      raise ClusterError(explain(what, self.namespace, e.status, e.reason, e.body,
                                 self.grants)) from None

  def send(self, what: str, method: str, path: str, body: dict, content_type: str =
           "application/json", query=()) -> dict:
    """One request with strict field validation: a field this cluster's
    version of the API does not know is refused by name, not silently
    dropped (the client's own methods cannot ask for that)."""
    return self.call(
        what, self.custom.api_client.call_api, path, method,
        query_params=[("fieldValidation", "Strict"), *query], body=body,
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        response_type="object", auth_settings=["BearerToken"], _return_http_data_only=True)


def create(cluster: Cluster, group: str, version: str, plural: str, body: dict) -> dict:
  """Creates a custom object in the cluster's namespace, strictly validated."""
  path = f"/apis/{group}/{version}/namespaces/{cluster.namespace}/{plural}"
  return cluster.send(f"create {plural}.{group} {body['metadata']['name']}", "POST",
                      path, body)


def explain(what: str, namespace: str, status: int, reason: str, body,
            grants: Grants) -> str:
  """One line for an API error: what was asked, what the cluster said, and
  what to install or grant."""
  try:
    message = json.loads(body).get("message", "") if body else ""
  except ValueError:
    message = str(body)
  said = message or reason
  if said.startswith("admission webhook "):  # a rule of the cluster's, not a right
    return f"{what}: refused by the cluster ({said})"
  if status == 403:
    return (f"{what}: forbidden in namespace {namespace} ({said}); grant the step's service "
            f"account what it needs: kubectl apply -n {namespace} -f {grants.rbac} (on a "
            f"multi-user install, every profile at once: kubectl apply -f {grants.profiles})")
  if status == 404 and "could not find the requested resource" in said:
    return (f"{what}: this cluster does not serve that API ({said}); "
            f"{grants.missing_api}")
  return f"{what}: the cluster answered {status} {reason}: {said}"

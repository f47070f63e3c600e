"""Reaching the cluster as Kubernetes clients do, and saying plainly what it lacks.

The `kubernetes` client (in the lock), not Kubeflow's SDK: that installs a
top-level package named `kubeflow`, which this project's own would shadow.
Inside a pod the client uses the pod's service account, elsewhere
`KUBECONFIG`; the namespace is the pod's own (or the kubeconfig context's).

What a user of this step meets from the cluster, each as one line:
- a forbidden call: which verb on which resource, and the manifest that
  grants it (kubeflow/manifests/trainer-rbac.yaml);
- an engine that is not installed: which API is missing, and what to install;
- a missing runtime: which, and the manifest that defines it.
"""

import logging
import os
from typing import Callable, Dict, List, Optional

from trainer.jobs.job import ClusterError

log = logging.getLogger("absl")
NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
RBAC = "kubeflow/manifests/trainer-rbac.yaml"
RBAC_PROFILES = "kubeflow/manifests/trainer-rbac-kubeflow-edit.yaml"  # aggregated to kubeflow-edit


class Cluster:
  """The API clients and this pod's namespace."""

  def __init__(self):
    from kubernetes import client, config
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
      # A missing object, not a missing kind of object (an engine not installed).
      if e.status == 404 and missing_ok and b"could not find the requested resource" \
          not in (e.body if isinstance(e.body, bytes) else str(e.body or "").encode()):
        return None
      raise ClusterError(explain(what, self.namespace, e.status, e.reason, e.body)) from None


def create(cluster: "Cluster", group: str, version: str, plural: str, body: dict) -> dict:
  """Creates a custom object with strict field validation: a field this
  cluster's version of the API does not know is refused by name, not
  silently dropped (the client's own create method cannot ask for that)."""
  path = f"/apis/{group}/{version}/namespaces/{cluster.namespace}/{plural}"
  return cluster.call(
      f"create {plural}.{group} {body['metadata']['name']}",
      cluster.custom.api_client.call_api, path, "POST",
      query_params=[("fieldValidation", "Strict")], body=body,
      header_params={"Content-Type": "application/json", "Accept": "application/json"},
      response_type="object", auth_settings=["BearerToken"], _return_http_data_only=True)


def explain(what: str, namespace: str, status: int, reason: str, body) -> str:
  """One line for an API error: what was asked, what the cluster said, and
  what to install or grant."""
  import json
  try:
    message = json.loads(body).get("message", "") if body else ""
  except ValueError:
    message = str(body)
  said = message or reason
  if said.startswith("admission webhook "):  # a rule of the cluster's, not a right
    return f"{what}: refused by the cluster ({said})"
  if status == 403:
    return (f"{what}: forbidden in namespace {namespace} ({said}); grant the step's service "
            f"account what it needs: kubectl apply -n {namespace} -f {RBAC} (on a "
            f"multi-user install, every profile at once: kubectl apply -f {RBAC_PROFILES})")
  if status == 404 and "could not find the requested resource" in said:
    return (f"{what}: this cluster does not serve that API ({said}); install the "
            f"engine (docs/kubeflow.md, \"Training on several machines\")")
  return f"{what}: the cluster answered {status} {reason}: {said}"


def owner(cluster: Cluster, env=os.environ) -> Optional[Dict]:
  """An ownerReference to this run's Argo Workflow, for the job: the
  cluster then collects the job with the run even if this step never comes
  back, while a retried step (a new pod of the same Workflow) still finds
  it. The step's own pod would be the wrong owner: a retry replaces it.
  None outside a Workflow's pod."""
  # KFP's compiler gives every step container its pod's name (2.0 to 2.17,
  # argocompiler's commonEnvs); HOSTNAME is that name cut to 63 characters.
  pod_name = env.get("KFP_POD_NAME") or env.get("HOSTNAME", "")
  pod = cluster.call(f"get pod {pod_name}", cluster.core.read_namespaced_pod, pod_name,
                     cluster.namespace, missing_ok=True) if pod_name else None
  for ref in (pod.metadata.owner_references or []) if pod else []:
    if ref.kind == "Workflow":
      return {"apiVersion": ref.api_version, "kind": "Workflow", "name": ref.name,
              "uid": ref.uid, "blockOwnerDeletion": False}
  # Not a Workflow's pod: say what that costs.
  log.info("the step's pod %r has no Argo Workflow owner: its training job is deleted "
           "only by this step, not with the run", pod_name)
  return None


def env_vars(pod: Dict) -> List[Dict]:
  """The step's --env values and --secret-env references, for each worker."""
  plain = [{"name": k, "value": v} for k, v in sorted(pod.get("env", {}).items())]
  secret = [{"name": var, "valueFrom": {"secretKeyRef": {"name": s, "key": k}}}
            for s, k, var in pod.get("secretEnv", [])]
  return plain + secret


def resources(pod: Dict) -> Dict:
  """Each worker's requests and limits, as the compiler wrote the Trainer's."""
  r = pod.get("resources") or {}
  amounts = {}
  if r.get("cpu"):
    amounts["cpu"] = str(r["cpu"])
  if r.get("memory_gb"):
    amounts["memory"] = f"{r['memory_gb']}G"
  if r.get("gpus"):
    amounts[r.get("gpu_type") or "nvidia.com/gpu"] = str(r["gpus"])
  return {"requests": dict(amounts), "limits": dict(amounts)} if amounts else {}

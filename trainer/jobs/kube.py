"""The training launcher's side of the cluster (runtime/kube.py reaches it).

What a user of this step meets from the cluster, each as one line:
- a forbidden call: which verb on which resource, and the manifest that
  grants it (kubeflow/manifests/trainer-rbac.yaml);
- an engine that is not installed: which API is missing, and what to install;
- a missing runtime: which, and the manifest that defines it.
"""

import dataclasses
import logging
import os
from typing import Dict, List, Optional

from runtime import kube
from runtime.kube import NAMESPACE_FILE, ClusterError  # noqa: F401  (callers' names)
from trainer.jobs.job import Job

log = logging.getLogger("absl")
RBAC = "kubeflow/manifests/trainer-rbac.yaml"
RBAC_PROFILES = "kubeflow/manifests/trainer-rbac-kubeflow-edit.yaml"  # aggregated to kubeflow-edit
GRANTS = kube.Grants(RBAC, RBAC_PROFILES,
                     'install the engine (docs/kubeflow.md, "Training on several machines")')


class Cluster(kube.Cluster):
  """The API clients and this pod's namespace; refusals say what to grant
  the Trainer's step."""

  def __init__(self):
    super().__init__(GRANTS)


create = kube.create


def explain(what: str, namespace: str, status: int, reason: str, body) -> str:
  """One line for an API error met by the training launcher."""
  return kube.explain(what, namespace, status, reason, body, GRANTS)


def step_pod(cluster: Cluster, env=os.environ):
  """This step's own pod object (the kubernetes client's V1Pod), or None
  outside a pod the API knows."""
  # KFP's compiler gives every step container its pod's name (2.0 to 2.17,
  # argocompiler's commonEnvs); HOSTNAME is that name cut to 63 characters.
  pod_name = env.get("KFP_POD_NAME") or env.get("HOSTNAME", "")
  return cluster.call(f"get pod {pod_name}", cluster.core.read_namespaced_pod, pod_name,
                      cluster.namespace, missing_ok=True) if pod_name else None


def owner(pod) -> Optional[Dict]:
  """An ownerReference to this run's Argo Workflow, for the job: the
  cluster then collects the job with the run even if this step never comes
  back, while a retried step (a new pod of the same Workflow) still finds
  it. The step's own pod would be the wrong owner: a retry replaces it.
  None outside a Workflow's pod."""
  for ref in (pod.metadata.owner_references or []) if pod else []:
    if ref.kind == "Workflow":
      return {"apiVersion": ref.api_version, "kind": "Workflow", "name": ref.name,
              "uid": ref.uid, "blockOwnerDeletion": False}
  # Not a Workflow's pod: say what that costs.
  log.info("the step's pod %r has no Argo Workflow owner: its training job is deleted "
           "only by this step, not with the run", pod.metadata.name if pod else "")
  return None


def with_identity(job: Job, pod) -> Job:
  """`job` whose workers run as the step's own service account, unless the
  compiler named one (`--train-service-account`). Where storage is reached
  by a pod's Kubernetes identity (GKE Workload Identity, an IAM role on a
  profile's account), the step wrote the job's inputs as its account, and
  workers left to the namespace's `default` would get 403 reading them.
  Kubeflow's multi-user install runs steps as `default-editor`
  (kubeflow/manifests v1.11.0 applications/pipeline/upstream/base/installs/
  multi-user/api-service/params.env line 2)."""
  if job.pod.get("serviceAccountName"):
    log.info("training job %s: workers run as service account %s (--train-service-account)",
             job.name, job.pod["serviceAccountName"])
    return job
  account = pod.spec.service_account_name if pod is not None and pod.spec else None
  if not account:
    return job
  log.info("training job %s: workers run as service account %s, the step's", job.name,
           account)
  return dataclasses.replace(job, pod={**job.pod, "serviceAccountName": account})


def env_vars(pod: Dict, launcher: List[Dict] = ()) -> List[Dict]:
  """The step's --env values and --secret-env references, then the
  launcher's own, for each worker: one entry per name, the later winning.
  Both engines' CRDs key the list by name (Trainer's `trainer.env`,
  trainjob_types.go@v2.3.0 line 273; the TFJob's container env), so the
  API server refuses a name given twice ("Duplicate value")."""
  plain = [{"name": k, "value": v} for k, v in sorted(pod.get("env", {}).items())]
  secret = [{"name": var, "valueFrom": {"secretKeyRef": {"name": s, "key": k}}}
            for s, k, var in pod.get("secretEnv", [])]
  return list({var["name"]: var for var in plain + secret + list(launcher)}.values())


def pull_secrets(pod: Dict) -> List[Dict]:
  """The workers' image pull secrets, each once (a list keyed by name)."""
  return [{"name": n} for n in dict.fromkeys(pod.get("imagePullSecrets", []))]


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

"""Kubeflow Trainer v2: the workers as a TrainJob on our PlainML runtime.

Kubeflow Trainer has no TensorFlow runtime (kubeflow/trainer#2699): the
TrainJob names the runtime shipped in kubeflow/manifests/trainingruntime.yaml,
whose PlainML policy sets only the node count and copies `trainer.env` into
the `node` container. So the launcher puts the job's name, its worker count
and the port there, and each worker builds TF_CONFIG from them and its
JOB_COMPLETION_INDEX (roles.py).

Versions (the objects' fields, from the Trainer's API types):
- 2.0 and 2.1: a TrainJob without per-step node selectors, tolerations or
  pull secrets (they had `podSpecOverrides`, then `podTemplateOverrides`);
  set those in the runtime instead.
- 2.2 and later: all of them, through `runtimePatches`. Objects are sent
  with strict field validation, so an older Trainer refuses a patch by name
  instead of dropping it.
The JobSet underneath restarts the whole job on a worker's failure up to
the runtime's `failurePolicy.maxRestarts`; then the TrainJob fails.
"""

import sys
from typing import Dict, Optional

from trainer.jobs import kube, roles, watch
from trainer.jobs.job import ClusterError, Job

group, version, plural, kind = "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob"
RUNTIME = "tfrecord-pipeline-tensorflow"  # kubeflow/manifests/trainingruntime.yaml
RUNTIME_MANIFEST = "kubeflow/manifests/trainingruntime.yaml"
INDEX = "batch.kubernetes.io/job-completion-index"
# Who wrote a runtime patch: the TrainJob webhook refuses anything but a
# domain-prefixed path (validation.IsDomainPrefixedPath, kubeflow/trainer
# v2.2.0 pkg/runtime/framework/plugins/jobset/jobset.go line 129, line 176
# at v2.3.0), as Kueue writes `kueue.x-k8s.io/manager`.
MANAGER = "tfrecord-pipeline.github.io/launcher"


def check(cluster: kube.Cluster) -> None:
  """The runtime must exist: the Trainer's webhook would refuse the TrainJob
  (`specified trainingRuntime must be created before the TrainJob is
  created`); asked first, the step names the manifest to apply."""
  found = cluster.call(f"get trainingruntimes.{group} {RUNTIME}",
                       cluster.custom.get_namespaced_custom_object, group, version,
                       cluster.namespace, "trainingruntimes", RUNTIME, missing_ok=True)
  if found is None:
    raise ClusterError(f"no TrainingRuntime {RUNTIME} in namespace {cluster.namespace}: "
                       f"install it with kubectl apply -n {cluster.namespace} -f "
                       f"{RUNTIME_MANIFEST}")


def body(job: Job, namespace: str, owner: Optional[Dict]) -> Dict:
  pod = job.pod
  env = kube.env_vars(pod) + [
      {"name": roles.JOB_ENV, "value": job.name},
      {"name": roles.WORKERS_ENV, "value": str(job.workers)},
      {"name": roles.PORT_ENV, "value": str(roles.DEFAULT_PORT)}]
  trainer = {"image": pod.get("image", ""), "command": job.command, "env": env,
             "numNodes": job.workers}
  if kube.resources(pod):
    trainer["resourcesPerNode"] = kube.resources(pod)
  spec = {"runtimeRef": {"name": RUNTIME, "apiGroup": group, "kind": "TrainingRuntime"},
          "trainer": trainer}
  placed = {k: pod[k] for k in ("nodeSelector", "tolerations") if pod.get(k)}
  if pod.get("imagePullSecrets"):
    placed["imagePullSecrets"] = [{"name": n} for n in pod["imagePullSecrets"]]
  if placed:  # Trainer 2.2 and later
    spec["runtimePatches"] = [{"manager": MANAGER, "trainingRuntimeSpec": {
        "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {
            "spec": {"template": {"spec": placed}}}}]}}}}]
  metadata = {"name": job.name, "namespace": namespace,
              "labels": {"app.kubernetes.io/managed-by": "tfrecord-pipeline"}}
  if owner:
    metadata["ownerReferences"] = [owner]
  return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": metadata,
          "spec": spec}


def verdict(obj: Dict):
  """("succeeded" | "failed" | "running", the condition's message)."""
  for cond in obj.get("status", {}).get("conditions", []):
    if cond.get("status") == "True" and cond.get("type") == "Complete":
      return "succeeded", cond.get("message", "")
    if cond.get("status") == "True" and cond.get("type") == "Failed":
      return "failed", f"{cond.get('reason', '')}: {cond.get('message', '')}"
  return "running", ""


def pod_selector(name: str) -> str:
  return f"jobset.sigs.k8s.io/jobset-name={name}"  # JobSet is named after the TrainJob


def index_of(pod) -> int:
  marks = {**(pod.metadata.labels or {}), **(pod.metadata.annotations or {})}
  return int(marks.get(INDEX, -1))


def run(job: Job) -> None:
  watch.run(sys.modules[__name__], job)

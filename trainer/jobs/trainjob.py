"""Kubeflow Trainer v2: the workers as a TrainJob on our PlainML runtime.

Kubeflow Trainer has no TensorFlow runtime (kubeflow/trainer#2699): the
TrainJob names the runtime shipped in kubeflow/manifests/trainingruntime.yaml,
whose PlainML policy sets only the node count and copies `trainer.env` into
the `node` container. So the launcher puts the job's name, its worker count
and the port there, and each worker builds TF_CONFIG from them and its
JOB_COMPLETION_INDEX (roles.py). The runtime is the cluster admin's to
apply: a profile's role reads runtimes but cannot create them (kubeflow/
trainer v2.3.0 manifests/overlays/kubeflow-platform/kubeflow-trainer-roles.yaml
grants get, list and watch).

Where each Trainer takes the workers' node selector, tolerations, image
pull secrets and service account (`pkg/apis/trainer/v1alpha1/
trainjob_types.go` at each tag), the FORMS, newest first:
- 2.2 and later: `runtimePatches`, a patch of the runtime's JobSet template
  (v2.3.0 PodSpecPatch, lines 390-463);
- 2.1 (Kubeflow's platform, manifests v1.11.0): `podTemplateOverrides`
  (v2.1.0 lines 123-127, 267-339);
- 2.0: `podSpecOverrides` (v2.0.0 lines 234-247), without image pull
  secrets.
A profile's user cannot read the TrainJob CRD (cluster-scoped) to learn the
version, so the launcher asks in the newest form and, when the API server's
strict decoding refuses that form's field by name, once more in the next
older one. With nothing to place, the TrainJob has none of them, which
every version takes. The JobSet underneath restarts the whole job on a
worker's failure up to the runtime's `failurePolicy.maxRestarts`; then the
TrainJob fails.
"""

import copy
import logging
import sys
from typing import Dict, Optional

from trainer.jobs import kube, roles, watch
from trainer.jobs.job import ClusterError, Job

log = logging.getLogger("absl")  # the step's log on Kubeflow
group, version, plural, kind = "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob"
RUNTIME = "tfrecord-pipeline-tensorflow"  # kubeflow/manifests/trainingruntime.yaml
RUNTIME_MANIFEST = "kubeflow/manifests/trainingruntime.yaml"
INDEX = "batch.kubernetes.io/job-completion-index"
NODE = "node"  # the runtime's replicated job of trainers (ancestor `trainer`)
# Who wrote a runtime patch: the TrainJob webhook refuses anything but a
# domain-prefixed path (validation.IsDomainPrefixedPath, kubeflow/trainer
# v2.2.0 pkg/runtime/framework/plugins/jobset/jobset.go line 129, line 176
# at v2.3.0), as Kueue writes `kueue.x-k8s.io/manager`.
MANAGER = "tfrecord-pipeline.github.io/launcher"
# spec field -> the Trainer versions that take it, newest first.
FORMS = {"runtimePatches": "2.2 and later", "podTemplateOverrides": "2.1",
         "podSpecOverrides": "2.0"}


def check(cluster: kube.Cluster) -> None:
  """The runtime must exist: the Trainer's webhook would refuse the TrainJob
  (`specified trainingRuntime must be created before the TrainJob is
  created`); asked first, the step says whose it is to apply."""
  found = cluster.call(f"get trainingruntimes.{group} {RUNTIME}",
                       cluster.custom.get_namespaced_custom_object, group, version,
                       cluster.namespace, "trainingruntimes", RUNTIME, missing_ok=True)
  if found is None:
    raise ClusterError(f"expected the TrainingRuntime {RUNTIME} in namespace "
                       f"{cluster.namespace}, found none: it is the cluster admin's to apply "
                       f"(kubectl apply -n {cluster.namespace} -f {RUNTIME_MANIFEST}; a "
                       f"profile's role can read runtimes, not create them)")


def placement(pod: Dict) -> Dict:
  """The workers' pod fields the runtime does not set: a PodSpec's names."""
  placed = {k: pod[k] for k in ("nodeSelector", "tolerations", "serviceAccountName")
            if pod.get(k)}
  if pod.get("imagePullSecrets"):
    placed["imagePullSecrets"] = kube.pull_secrets(pod)
  return placed


def placed_in(form: str, placed: Dict) -> list:
  """`placed` as the value of the spec field `form`, for the `node` job.

  Raises:
    ClusterError: image pull secrets for Trainer 2.0, which has no field
      for them.
  """
  target = [{"name": NODE}]
  if form == "runtimePatches":
    return [{"manager": MANAGER, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": NODE, "template": {"spec": {"template": {
            "spec": placed}}}}]}}}}]
  if form == "podTemplateOverrides":
    return [{"targetJobs": target, "spec": placed}]
  if placed.get("imagePullSecrets"):
    names = ", ".join(s["name"] for s in placed["imagePullSecrets"])
    raise ClusterError(f"expected a Kubeflow Trainer that takes a TrainJob's image pull "
                       f"secrets (2.1 and later), found 2.0, whose podSpecOverrides has none: "
                       f"{names} cannot reach the workers; ask the cluster admin to upgrade "
                       f"the Trainer or to add them to the runtime {RUNTIME}")
  return [{"targetJobs": target, **placed}]


def in_form(body: Dict, form: str, placed: Dict) -> Dict:
  """`body` with the placement in `form` alone."""
  changed = copy.deepcopy(body)
  for other in FORMS:
    changed["spec"].pop(other, None)
  changed["spec"][form] = placed_in(form, placed)
  return changed


def body(job: Job, namespace: str, owner: Optional[Dict]) -> Dict:
  """The TrainJob, its placement (if any) in the newest form."""
  pod = job.pod
  env = kube.env_vars(pod, [
      {"name": roles.JOB_ENV, "value": job.name},
      {"name": roles.WORKERS_ENV, "value": str(job.workers)},
      {"name": roles.PORT_ENV, "value": str(roles.DEFAULT_PORT)}])
  trainer = {"image": pod.get("image", ""), "command": job.command, "env": env,
             "numNodes": job.workers}
  if kube.resources(pod):
    trainer["resourcesPerNode"] = kube.resources(pod)
  spec = {"runtimeRef": {"name": RUNTIME, "apiGroup": group, "kind": "TrainingRuntime"},
          "trainer": trainer}
  metadata = {"name": job.name, "namespace": namespace,
              "labels": {"app.kubernetes.io/managed-by": "tfrecord-pipeline"}}
  if owner:
    metadata["ownerReferences"] = [owner]
  made = {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": metadata,
          "spec": spec}
  placed = placement(pod)
  return in_form(made, next(iter(FORMS)), placed) if placed else made


def create(cluster: kube.Cluster, job: Job, made: Dict) -> Dict:
  """Creates the TrainJob `made` (body's); refused by strict decoding for
  its placement's field (`unknown field "spec.runtimePatches"`), once more
  in the next older form. Says in the step's log which form was taken."""
  placed = placement(job.pod)
  if not placed:
    return kube.create(cluster, group, version, plural, made)
  forms = list(FORMS)
  for i, form in enumerate(forms):
    try:
      created = kube.create(cluster, group, version, plural, in_form(made, form, placed))
      break
    except ClusterError as e:  # an older Trainer's strict decoding names the field
      if i + 1 == len(forms) or f'unknown field "spec.{form}"' not in str(e):
        raise
  log.info("training job %s: the workers' %s went in spec.%s (Kubeflow Trainer %s)",
           job.name, ", ".join(placed), form, FORMS[form])
  return created


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

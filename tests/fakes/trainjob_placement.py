"""Where a TrainJob's pods run, as each Kubeflow Trainer release decides it:
a STAND-IN for the Trainer's merge of the TrainJob's per-job placement into
its runtime's pod template (training_engines.py gives the result to each
pod of the job).

Each release reads one spec field (trainjob_types.go at its tag) and merges
it into the runtime's JobSet template before it builds the JobSet:
- 2.0.0 `podSpecOverrides`: for each override naming the job in
  `targetJobs`, the override itself as a strategic merge patch of the pod
  template's PodSpec (pkg/runtime/core/trainingruntime.go
  mergePodSpecOverrides, lines 182-211; called at line 133);
- 2.1.0 `podTemplateOverrides`: the override's `spec` as a strategic merge
  patch of the pod template (its `spec` under the PodTemplateSpec; the same
  file, mergePodTemplateOverrides, lines 190-238; called at line 142);
- 2.2.0 and later `runtimePatches`: the patch's JobSet spec as a strategic
  merge patch of the runtime's, its replicated jobs matched by name
  (v2.3.0 the same file, mergeRuntimePatches, lines 251-290, called at
  line 162; lines 252-256 keep the runtime's order, which the merge by
  name may change).
In each, the entries apply in order, a later one over an earlier one.

A strategic merge patch of a PodSpec, for the fields modelled here
(k8s.io/api core/v1 types.go, PodSpec's field tags): `nodeSelector`, a
map, merged key by key; `tolerations`, no patch strategy, replaced whole;
`imagePullSecrets`, `patchStrategy:"merge"` on `name`, merged by name;
`serviceAccountName`, replaced. Not modelled: the other PodSpec fields
(affinity, volumes, containers), the pod template's metadata, and the
field a release does not have (the API server refuses it first).
"""

from typing import Dict, Iterator, Tuple

FIELDS = ("nodeSelector", "tolerations", "imagePullSecrets", "serviceAccountName")


def patches(trainjob: dict, version: str) -> Iterator[Tuple[str, dict]]:
  """(target job, PodSpec patch), in the order the release applies them."""
  spec = trainjob.get("spec", {})
  if version >= "2.2":
    for patch in spec.get("runtimePatches") or []:
      template = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get(
          "spec") or {}
      for job in template.get("replicatedJobs") or []:
        pod = job.get("template", {}).get("spec", {}).get("template", {}).get("spec") or {}
        yield job.get("name", ""), pod
    return
  field = "podTemplateOverrides" if version == "2.1" else "podSpecOverrides"
  for override in spec.get(field) or []:
    pod = (override.get("spec") or {}) if version == "2.1" else override
    for target in override.get("targetJobs") or []:
      yield target.get("name", ""), pod


def merge(pod: Dict, patch: Dict) -> Dict:
  """`patch` merged into `pod` as a strategic merge patch, for FIELDS."""
  merged = dict(pod)
  if "nodeSelector" in patch:
    merged["nodeSelector"] = {**pod.get("nodeSelector", {}), **patch["nodeSelector"]}
  for field in ("tolerations", "serviceAccountName"):
    if field in patch:
      merged[field] = patch[field]
  if "imagePullSecrets" in patch:
    kept = [s for s in pod.get("imagePullSecrets", [])
            if s.get("name") not in {p.get("name") for p in patch["imagePullSecrets"]}]
    merged["imagePullSecrets"] = kept + list(patch["imagePullSecrets"])
  return merged


def placed(trainjob: dict, runtime_pod: dict, job: str, version: str) -> Dict:
  """FIELDS of job `job`'s pods: the runtime's, with the TrainJob's merged."""
  pod = {k: runtime_pod[k] for k in FIELDS if runtime_pod.get(k)}
  for target, patch in patches(trainjob, version):
    if target == job:
      pod = merge(pod, patch)
  return {k: v for k, v in pod.items() if v}

"""The validating webhooks of the engines the launcher creates jobs on, as
STAND-INS: what each refuses, in its own words (kubernetes_api.py answers
a refusal with 403, `admission webhook "<name>" denied the request: ...`,
as the API server relays controller-runtime's Denied)."""

import re
from typing import List, Optional

from tests.fakes import kserve

DOMAIN_PREFIXED = re.compile(r"^(?=.{1,253}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                             r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/.+$")


def problems(trainer_version: str, plural: str, body: dict, old: Optional[dict] = None,
             kserve_version: str = "0.20") -> List[str]:
  """What the engines' validating webhooks refuse, in their words.

  - TrainJob (Kubeflow Trainer 2.2 and later, `validator.trainjob.trainer.
    kubeflow.org`): each runtime patch's `manager` must be a domain-prefixed
    path (kubeflow/trainer v2.2.0 pkg/runtime/framework/plugins/jobset/
    jobset.go line 129; line 176 at v2.3.0: apimachinery's
    validation.IsDomainPrefixedPath, whose message this is).
  - TFJob (training-operator release-1.9, `validator.tfjob.training-operator.
    kubeflow.org`, pkg/webhooks/tensorflow/tfjob_webhook.go lines 73-127):
    the name a DNS-1035 label; replica specs present, each with containers,
    each container an image, one container named `tensorflow`; at most one
    Chief or Master; `runPolicy.managedBy` one of the supported controllers
    (pkg/common/util/webhooks.go lines 15-25).
  Not modelled: the TrainJob webhook's other rules (the runtime's
  replicated jobs and containers, initializers, immutability on update).
  """
  if plural == "inferenceservices":
    return kserve.problems(body, old, kserve_version)
  if plural == "tfjobs":
    return tfjob_problems(body)
  if plural == "trainingruntimes":
    return runtime_problems(body)
  if plural != "trainjobs" or trainer_version < "2.2":
    return []
  found = []
  for patch in body.get("spec", {}).get("runtimePatches", []):
    manager = patch.get("manager", "")
    if not manager:
      found.append("spec.runtimePatches.manager: Required value")
    elif not DOMAIN_PREFIXED.match(manager):
      found.append(f'spec.runtimePatches.manager: Invalid value: "{manager}": must be a '
                   f'domain-prefixed path (such as "acme.io/foo")')
  return found


DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
def mutate(plural: str, body: dict, kserve_version: str = "0.20") -> None:
  """The mutating webhooks, in place: KServe's defaulter (kserve.py)."""
  if plural == "inferenceservices":
    kserve.mutate(body, kserve_version)


WEBHOOKS = {"inferenceservices": kserve.WEBHOOK,
            "trainjobs": "validator.trainjob.trainer.kubeflow.org",
            "trainingruntimes": "validator.trainingruntime.trainer.kubeflow.org",
            "tfjobs": "validator.tfjob.training-operator.kubeflow.org"}


def tfjob_problems(body: dict) -> List[str]:
  """The Training Operator's TFJob webhook, in its words (field.ErrorList)."""
  found, name = [], body.get("metadata", {}).get("name", "")
  why = []
  if len(name) > 63:
    why.append("must be no more than 63 characters")
  if not DNS1035.match(name):
    why.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
               "start with an alphabetic character, and end with an alphanumeric character "
               "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
               "'[a-z]([-a-z0-9]*[a-z0-9])?')")
  if why:
    found.append(f'metadata.name: Invalid value: "{name}": should match: {",".join(why)}')
  manager = body.get("spec", {}).get("runPolicy", {}).get("managedBy")
  if manager is not None and manager not in ("kubeflow.org/training-operator",
                                             "kueue.x-k8s.io/multikueue"):
    found.append(f'spec.runPolicy.managedBy: Unsupported value: "{manager}": supported '
                 f'values: "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"')
  specs = body.get("spec", {}).get("tfReplicaSpecs")
  if specs is None:
    found.append("spec.tfReplicaSpecs: Required value: must be required")
  for role, spec in (specs or {}).items():
    path = f"spec.tfReplicaSpecs[{role}].template.spec.containers"
    containers = ((spec or {}).get("template", {}).get("spec", {}) or {}).get(
        "containers") or []
    if not containers:
      found.append(f"{path}: Required value: must be specified")
    for i, container in enumerate(containers):
      if not container.get("image"):
        found.append(f"{path}[{i}].image: Required value: must be required")
    if not any(c.get("name") == "tensorflow" for c in containers):
      found.append(f"{path}: Required value: must have at least one container with name "
                   f"tensorflow")
  if sum(role in ("Chief", "Master") for role in specs or {}) > 1:
    found.append("spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master "
                 "role")
  return found


ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_CONTAINERS = {"trainer": "node", "model-initializer": "model-initializer",
                       "dataset-initializer": "dataset-initializer"}


def runtime_problems(body: dict) -> List[str]:
  """Kubeflow Trainer's TrainingRuntime webhook (v2.2.0
  pkg/webhooks/trainingruntime_webhook.go lines 66-104): a replicated job
  labelled with an ancestor step has one replica (JobSet's default) and
  that ancestor's container. Go prints the refused container list whole;
  here it is cut to its names."""
  found = []
  jobs = body.get("spec", {}).get("template", {}).get("spec", {}).get("replicatedJobs", [])
  for i, job in enumerate(jobs):
    ancestor = (job.get("template", {}).get("metadata", {}).get("labels") or {}).get(ANCESTOR)
    if ancestor not in ANCESTOR_CONTAINERS:
      continue
    path = f"spec.template.spec.replicatedJobs[{i}]"
    if job.get("replicas", 1) != 1:
      found.append(f"{path}.replicas: Invalid value: {job['replicas']}: always must be 1")
    containers = (job.get("template", {}).get("spec", {}).get("template", {}).get("spec", {})
                  .get("containers") or [])
    if not any(c.get("name") == ANCESTOR_CONTAINERS[ancestor] for c in containers):
      names = ", ".join(c.get("name", "") for c in containers)
      found.append(f"{path}.template.spec.template.spec.containers: Invalid value: "
                   f"[]v1.Container{{{names}}}: must contain the required container for the "
                   f"ancestor: {ancestor}")
  return found


def missing_runtime(ref: dict, plural: str) -> str:
  """The TrainJob webhook's refusal of a TrainJob whose runtime does not
  exist (kubeflow/trainer pkg/runtime/core/trainingruntime.go ValidateObjects:
  lines 253-263 at v2.0.0, 252-262 at v2.1.0, 253-263 at v2.2.0, 304-314 at
  v2.3.0). Go prints the RuntimeRef struct; here its name and kind."""
  kind = "trainingRuntime" if plural == "trainingruntimes" else "clusterTrainingRuntime"
  name = ref.get("name", "")
  return (f'spec.runtimeRef: Invalid value: v1alpha1.RuntimeRef{{Name:"{name}", '
          f'Kind:"{ref.get("kind", "")}"}}: {plural}.trainer.kubeflow.org "{name}" not found: '
          f'specified {kind} must be created before the TrainJob is created')


# The per-job override of Trainer 2.0 and 2.1 (2.2 replaced it with
# runtimePatches, whose manager rule is in `problems`).
OVERRIDES = ("podSpecOverrides", "podTemplateOverrides")


def override_problems(body: dict, runtime: dict) -> List[str]:
  """The TrainJob webhook's rules on a per-job override, given its runtime
  (kubeflow/trainer pkg/runtime/framework/plugins/jobset/jobset.go Validate):
  each target job must be one of the runtime's replicated jobs (v2.0.0 line
  137, v2.1.0 line 129); at 2.0, no job may be targeted twice (v2.0.0 lines
  126-131, across all overrides). Go prints the whole override list; here
  its type. Not modelled: the rules on containers and their env."""
  jobs = {j.get("name") for j in runtime.get("spec", {}).get("template", {}).get(
      "spec", {}).get("replicatedJobs", [])}
  found, seen = [], set()
  for field in OVERRIDES:
    kind = "PodSpecOverride" if field == "podSpecOverrides" else "PodTemplateOverride"
    for override in body.get("spec", {}).get(field) or []:
      for target in override.get("targetJobs") or []:
        name = target.get("name", "")
        if field == "podSpecOverrides" and name in seen:
          found.append(f'spec.{field}: Duplicate value: "{name}"')
        seen.add(name)
        if name not in jobs:
          found.append(f"spec.{field}: Invalid value: []v1alpha1.{kind}{{...}}: must not "
                       f"have targetJob that doesn't exist in the runtime job template")
  return found

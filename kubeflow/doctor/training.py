"""The Trainer's workers' job (compiled with `--train-workers N
--train-engine trainjob|tfjob`): the cluster serves the engine's API, the
TrainJob's runtime exists, and the step's service account holds every
right the launcher uses (trainer/jobs/).

The rights are the ones kubeflow/manifests/trainer-rbac.yaml grants, the
one home of what the launcher calls, asked of the cluster as
`kubectl auth can-i --as` does: a SubjectAccessReview for the step's
account. KFP runs steps as `pipeline-runner` in a single-user install's
`kubeflow`, as `default-editor` in a multi-user install's profile namespace
(kubeflow/manifests v1.11.0 applications/pipeline/upstream/base/installs/
multi-user/api-service/params.env line 2).
"""

import os
from typing import Dict, List, Tuple

import yaml

from kubeflow import profile_paths
from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs
from trainer.jobs import kube as jobs_kube
from trainer.jobs import tfjob, trainjob
from trainer.jobs.job import ClusterError

ENGINES = {"trainjob": trainjob, "tfjob": tfjob}
MANIFESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "manifests")


def step_account(namespace: str) -> str:
  """The service account KFP runs a step as in `namespace`."""
  return "pipeline-runner" if namespace == profile_paths.SINGLE_USER_NAMESPACE \
      else "default-editor"


def needed_rights(engine) -> List[Tuple[str, str, str]]:
  """(verb, group, resource) the launcher needs for `engine`'s jobs: the
  rules of trainer-rbac.yaml's Role on the engine's group and on pods."""
  with open(os.path.join(MANIFESTS, os.path.basename(jobs_kube.RBAC)), encoding="utf-8") as f:
    role = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "Role")
  return [(verb, group, resource) for rule in role["rules"] for group in rule["apiGroups"]
          if group in (engine.group, "") for resource in rule["resources"]
          for verb in rule["verbs"]]


def _api(engine, reader: Reader) -> lines.Line:
  what = f"the {engine.kind} API ({engine.plural}.{engine.group}/{engine.version})"
  if reader.serves(engine.group, engine.version, engine.plural):
    return lines.ok(what)
  return lines.fail(what, "expected the cluster to serve it, found no such API "
                          "(its CRD is not installed)", jobs_kube.GRANTS.missing_api)


def _runtime(reader: Reader) -> lines.Line:
  what = f"the TrainingRuntime {trainjob.RUNTIME} in namespace {reader.namespace}"
  try:
    found = reader.custom(trainjob.group, trainjob.version, "trainingruntimes",
                          trainjob.RUNTIME)
  except Unreadable as e:
    return lines.unchecked(what, str(e))
  if found is None:
    return lines.fail(what, "expected it (the Trainer's webhook refuses a TrainJob whose "
                            "runtime does not exist), found none",
                      f"the cluster admin applies it: kubectl apply -n {reader.namespace} "
                      f"-f {trainjob.RUNTIME_MANIFEST}")
  return lines.ok(what)


def schema_fields(crd: Dict, version: str) -> List[str]:
  """The `spec` fields the CRD's served `version` declares."""
  for served in crd.get("spec", {}).get("versions", []):
    if served.get("name") == version and served.get("served", True):
      schema = served.get("schema", {}).get("openAPIV3Schema", {})
      return list(schema.get("properties", {}).get("spec", {}).get("properties", {}))
  return []


def _placement(needs: Needs, reader: Reader) -> lines.Line:
  """Which form the launcher's TrainJob will place its workers in
  (trainjob.FORMS): the newest the installed CRD declares, as the API
  server's strict decoding leaves the launcher; a failure only where no
  form it knows takes the placement. The workers run as the step's account
  unless compiled with one (trainer/jobs/kube.py `with_identity`), so there
  is always something to place."""
  pod = {"serviceAccountName": step_account(reader.namespace), **needs.worker_pod}
  placed = trainjob.placement(pod)
  name = f"{trainjob.plural}.{trainjob.group}"
  what = f"the TrainJob's placement of its workers ({', '.join(placed)})"
  try:
    crd = reader.crd(name)
  except Unreadable as e:
    return lines.unchecked(what, f"{e}; the launcher tries each form, newest first; an admin "
                                 f"can say which the Trainer takes: kubectl get crd {name} -o "
                                 f"jsonpath='{{.spec.versions[*].schema.openAPIV3Schema"
                                 f".properties.spec.properties}}'")
  fields = schema_fields(crd or {}, trainjob.version)
  form = next((f for f in trainjob.FORMS if f in fields), None)
  upgrade = "ask the cluster admin to install Kubeflow Trainer v2.1.0 or later"
  if form is None:
    return lines.fail(what, f"expected the TrainJob CRD ({trainjob.version}) to declare one "
                            f"of spec.{', spec.'.join(trainjob.FORMS)}, found none", upgrade)
  try:
    trainjob.placed_in(form, placed)
  except ClusterError as e:  # 2.0 with image pull secrets: nowhere to put them
    return lines.fail(what, str(e).split("; ")[0], f"{upgrade}, or to add the secrets to "
                      f"the runtime {trainjob.RUNTIME}; or compile without --image-pull-secret")
  return lines.ok(f"{what}: spec.{form} (Kubeflow Trainer {trainjob.FORMS[form]})")


def _rights(engine, reader: Reader) -> lines.Line:
  account = step_account(reader.namespace)
  what = f"the step's service account {account} may run {engine.kind}s"
  try:
    denied = [f"{verb} {resource}" for verb, group, resource in needed_rights(engine)
              if not reader.may(account, verb, group, resource)]
  except Unreadable as e:
    return lines.unchecked(what, f"{e}; an admin can ask: kubectl auth can-i create "
                                 f"{engine.plural}.{engine.group} -n {reader.namespace} --as "
                                 f"system:serviceaccount:{reader.namespace}:{account}")
  if denied:
    return lines.fail(what, f"expected every right of {jobs_kube.RBAC}, found denied: "
                            f"{', '.join(denied)}",
                      f"kubectl apply -n {reader.namespace} -f {jobs_kube.RBAC} (on a "
                      f"multi-user install, every profile at once: kubectl apply -f "
                      f"{jobs_kube.RBAC_PROFILES})")
  return lines.ok(what)


def check(needs: Needs, reader: Reader) -> List[lines.Line]:
  """The engine's lines; none when the Trainer trains in its own pod."""
  engine = ENGINES.get(needs.engine)
  if engine is None:
    return []
  api = _api(engine, reader)
  if api.verdict != lines.OK:
    return [api]  # the rest would only repeat that the API is missing
  out = [api]
  if engine is trainjob:
    out += [_runtime(reader), _placement(needs, reader)]
  return out + [_rights(engine, reader)]

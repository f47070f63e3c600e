"""The deployment-mode annotation an InferenceService is written with, on
every KServe from v0.15 (kubeflow/manifests v1.11.0 installs v0.15.2,
README.md:77) to v0.20.0. kserve/kserve file:line at each tag:

- v0.15.2 knows only `Serverless`, `RawDeployment` and `ModelMesh`
  (pkg/constants/constants.go:421-426); another value, such as `Knative`,
  falls to the configured default (pkg/controller/v1beta1/inferenceservice/
  utils/utils.go:176-191), which the status then records (controller.go:148,
  316-320). Its webhook compares a later update's annotation with that status
  as strings (pkg/apis/serving/v1beta1/inference_service_validation.go:
  447-456): `Knative` over a recorded `Serverless` is refused, "update
  rejected: deploymentMode cannot be changed from 'Serverless' to 'Knative'".
- v0.20.0 names them `Knative` and `Standard` and keeps the old names as
  deprecated (constants.go:562-565): its defaulter, on create and on update
  (config/webhook/manifests.yaml:14-26), rewrites `Serverless` to `Knative`
  and `RawDeployment` to `Standard` (inference_service_defaults.go:166-176)
  before the webhook compares with the recorded mode, itself read through
  the same mapping (inference_service_validation.go:691-701).
- v0.16.0 already records `Knative` for a `Serverless` annotation
  (utils.go:221-245) but neither rewrites the annotation nor maps the status
  before comparing (inference_service_validation.go:493-503).

So a create writes the old names, which every one of them takes to the mode
asked for; an update writes the mode the status recorded, verbatim, which
each compares equal to itself (after v0.20.0's defaulter maps it). Nothing
needs to know which KServe runs, and a step could not ask: neither the CRD
(cluster-scoped) nor the `inferenceservice-config` ConfigMap (namespace
`kubeflow` in kubeflow/manifests v1.11.0, applications/kserve/kserve/
kserve_kubeflow.yaml:32743-32744; `kserve` upstream) is readable to a
profile's `default-editor`, whose role is bound in its own namespace only.
"""

from typing import Optional

from runtime import kube

MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
MODES = {"knative": "Knative", "standard": "Standard"}  # constants.go@v0.20.0:562-565
WRITTEN = {"knative": "Serverless", "standard": "RawDeployment"}  # constants.go@v0.15.2:424-425
LEGACY_MODES = {WRITTEN[m]: MODES[m] for m in MODES}  # as v0.20.0 reads them


def created(mode: str) -> dict:
  """The annotations of a new InferenceService in `mode` (a key of MODES)."""
  return {MODE_ANNOTATION: WRITTEN[mode]}


def kept(found: dict) -> dict:
  """The annotations an update writes so that the mode stays the recorded
  one: none before the controller recorded it (the webhook then compares
  nothing, validation.go@v0.15.2:449)."""
  recorded = found.get("status", {}).get("deploymentMode")
  return {MODE_ANNOTATION: recorded} if recorded else {}


def recorded_mode(found: dict) -> Optional[str]:
  """The mode an InferenceService runs in, by v0.20.0's names: the status's,
  else its annotation's (the controller's order, utils.go@v0.15.2:177-187)."""
  recorded = (found.get("status", {}).get("deploymentMode")
              or found["metadata"].get("annotations", {}).get(MODE_ANNOTATION))
  return LEGACY_MODES.get(recorded, recorded)


def recorded_key(found: dict) -> str:
  """`recorded_mode` as a key of MODES; "" when neither the status nor an
  annotation says (not reconciled yet, and created without one).

  Raises:
    kube.ClusterError: a mode not deployed here (ModelMesh), in one line.
  """
  running = recorded_mode(found)
  keys = {value: key for key, value in MODES.items()}
  if running and running not in keys:
    raise kube.ClusterError(f"InferenceService {found['metadata']['name']} runs in {running} "
                            f"mode: expected {' or '.join(MODES.values())}, which "
                            "serving/kserve.py deploys")
  return keys.get(running, "")


def changed_from(found: dict, mode: str) -> Optional[str]:
  """The mode `found` runs in when an update in `mode` (a key of MODES)
  would change it, which KServe's webhook refuses; else None."""
  running = recorded_mode(found)
  return running if running and running != MODES[mode] else None


def flag_for(running: str) -> str:
  """The `--kserve-mode` that keeps `running`, "" for none (ModelMesh)."""
  return next((k for k, v in MODES.items() if v == running), "")


def refuse_change(found: dict, name: str, mode: str) -> None:
  """Raises kube.ClusterError, in one line, when `found` runs in another
  mode than `mode`: KServe's webhook would refuse the update."""
  running = changed_from(found, mode)
  if running:
    flag = flag_for(running)
    raise kube.ClusterError(
        f"InferenceService {name} runs in {running} mode, asked for {MODES[mode]}: KServe "
        "refuses to change it (update rejected: deploymentMode cannot be changed); deploy "
        + (f"with --kserve-mode {flag} or " if flag else "") + "under another name")

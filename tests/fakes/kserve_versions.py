"""KServe's deployment-mode rules by release, as STAND-INS: v0.15.2, what
Kubeflow's platform installs (kubeflow/manifests v1.11.0 README.md:77), and
v0.20.0, the release kserve.py follows. kserve.py's webhooks and controller
ask `RELEASES[store.kserve_version]` (kubernetes_api.Store) for these.

From kserve/kserve, file:line at each tag (v0.15.2 | v0.20.0):
- the modes the annotation `serving.kserve.io/deploymentMode` knows
  (pkg/constants/constants.go): Serverless, RawDeployment, ModelMesh
  (:421-426) | Knative, Standard, ModelMesh, with Serverless and
  RawDeployment kept as deprecated names (:559-568);
- the configured default (config/configmap/inferenceservice.yaml, `deploy`):
  Serverless (:701-704) | Serverless (:743-746), read as Knative
  (pkg/apis/serving/v1beta1/configmap.go:377-380);
- the defaulter, on create and update (config/webhook/manifests.yaml:14-26;
  pkg/apis/serving/v1beta1/inference_service_defaults.go): no annotation
  and a default of RawDeployment or ModelMesh writes the default (:158-167),
  any other value left as it is | the deprecated names rewritten to
  Knative and Standard (:164-176), then the same for Standard (:178-186);
- the mode the controller runs and records in `status.deploymentMode`
  (pkg/controller/v1beta1/inferenceservice/utils/utils.go GetDeploymentMode;
  controller.go updateStatus): the status's, else the annotation's if
  known, else the default (:176-191; controller.go:148, 316-320) | the same
  with deprecated names read as the new ones (:224-248; controller.go:156,
  421-425);
- the validator's mode-change refusal on update (inference_service_
  validation.go): an annotation other than the recorded status, compared as
  strings (:447-457) | compared with the status read through the
  deprecated names, nothing when no status is recorded (:691-701); in the
  same words, "update rejected: deploymentMode cannot be changed from
  '<recorded>' to '<annotation>'";
- `spec.canary` only in Standard mode: no such field | (:188-191).
Not modelled: ModelMesh (its own controller), a default changed in the
ConfigMap, the releases between (v0.16.0 neither rewrites the annotation nor
maps the status: serving/kserve_modes.py).
"""

import dataclasses
from typing import Dict, Optional

MODE = "serving.kserve.io/deploymentMode"


@dataclasses.dataclass(frozen=True)
class Release:
  """One release's mode rules.

  Attributes:
    tag: kserve/kserve's tag.
    knative, standard: the names its controller runs and records.
    deprecated: the old names its defaulter and controller read as new ones.
    default: the shipped `defaultDeploymentMode`, as the controller reads it.
    canary_field: whether `spec.canary` exists (and needs Standard mode).
  """
  tag: str
  knative: str
  standard: str
  deprecated: Dict[str, str]
  default: str
  canary_field: bool

  @property
  def modes(self) -> tuple:
    return (self.knative, self.standard, "ModelMesh")

  def read(self, mode: Optional[str]) -> Optional[str]:
    return self.deprecated.get(mode, mode)

  def defaulted(self, annotations: dict) -> None:
    """The defaulter's part on the annotation, in place."""
    if MODE in annotations:
      annotations[MODE] = self.read(annotations[MODE])
    elif self.default in (self.standard, "ModelMesh"):
      annotations[MODE] = self.default

  def running(self, status_mode: str, annotations: dict) -> str:
    """GetDeploymentMode: what the controller runs, and records."""
    if status_mode:
      return self.read(status_mode)
    wanted = self.read(annotations.get(MODE))
    return wanted if wanted in self.modes else self.default

  def mode_change(self, old: dict, annotations: dict) -> Optional[str]:
    """The validator's refusal of an update, or None."""
    recorded = old.get("status", {}).get("deploymentMode", "")
    wanted = annotations.get(MODE)
    if recorded and wanted is not None and wanted != self.read(recorded):
      return (f"update rejected: deploymentMode cannot be changed from "
              f"'{self.read(recorded)}' to '{wanted}'")
    return None


RELEASES = {
    "0.15": Release("v0.15.2", knative="Serverless", standard="RawDeployment",
                    deprecated={}, default="Serverless", canary_field=False),
    "0.20": Release("v0.20.0", knative="Knative", standard="Standard",
                    deprecated={"Serverless": "Knative", "RawDeployment": "Standard"},
                    default="Knative", canary_field=True),
}

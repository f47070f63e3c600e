"""The serving dir's versions on KServe: one InferenceService per pipeline,
pointed at a version, as a canary first when one already serves.

Supported: KServe v0.15 (Kubeflow's platform installs v0.15.2) to v0.20.0
(kserve/kserve at that tag; file:line below), in its default Knative mode
(v0.15's Serverless) for canaries (`--mode knative`), or Standard mode
(RawDeployment) without them. What upstream does, and what is done here:

- TF Serving needs numbered version folders under its `--model_base_path`
  (`/mnt/models`, config/runtimes/kserve-tensorflow-serving.yaml:27-32), and
  KServe copies the `storageUri`'s contents there as they are
  (python/storage/kserve_storage/kserve_storage.py:543-553). The serving
  dir would bring every version, and `<serving dir>/<N>/` none. So a
  version is staged as `<serving dir>/kserve/<N>/<N>/` (`stage`), and the
  URI is `<serving dir>/kserve/<N>/`, ending in `/`: an S3 prefix is matched
  unanchored (kserve_storage.py:533), so `kserve/17` would also fetch
  `kserve/170/`.
- The runtime's image is `tensorflow/serving:2.6.2` (config/runtimes/
  kustomization.yaml:22-24), older than the TensorFlow that exports the
  model; the predictor's container fields are merged over the runtime's
  (pkg/controller/v1beta1/inferenceservice/utils/utils.go:253-263), so the
  InferenceService names a TF Serving as new as its TensorFlow (`IMAGE`).
  It also names the runtime: another one may rank above TF Serving for an
  unpinned `tensorflow` model (predictor_model.go:133-163).
- A canary is `spec.predictor.canaryTrafficPercent`, read only in Knative
  mode (reconcilers/knative/ksvc_reconciler.go:123-164): the new revision
  gets that share, the last rolled-out one the rest. Standard mode ignores
  it, and v0.20.0's `spec.canary[]` sets replicas, not traffic
  (components/predictor.go:886-1040), so a canary in Standard mode is
  refused here. Removing the field promotes; 0 sends all traffic back to
  the last rolled-out revision (KServe's rollback).
- The mode annotation: v0.15.2 knows only the names v0.20.0 deprecates,
  and neither lets an update change the mode the status recorded. A create
  writes `Serverless` or `RawDeployment`, an update the status's own value;
  a deploy in another mode is refused here, in one line (kserve_modes.py).
- S3 credentials come from the Secrets listed on the predictor's account
  (service_account_credentials.go:214-216, 260-266; docs/kubeflow.md).

The serving dir stays the record of what is served: a rollback pushes a
copy of the version that takes the traffic, then points the
InferenceService at it (serving/kserve_rollback.py).
Calls go through the `kubernetes` client in the step's namespace; a refusal
is one line naming what grants them (kubeflow/manifests/kserve-rbac.yaml).
"""

import dataclasses
import os
import re
from typing import Optional

import serving
from runtime import kube, storage
from serving import kserve_modes, kserve_ready
from serving.kserve_modes import MODES

GROUP, API_VERSION, PLURAL = "serving.kserve.io", "v1beta1", "inferenceservices"
STAGED = "kserve"  # in the serving dir: kserve/<N>/<N>/, what KServe downloads
RUNTIME = "kserve-tensorflow-serving"
IMAGE = "tensorflow/serving:2.16.1"  # the TensorFlow the lock exports with (2.16)
# The serving-dir version rolled out before the one the spec names (which is
# its storageUri's). KServe copies an InferenceService's annotations into
# the Knative revision's template (components/predictor.go:100-102, 513-517),
# so a change of one is a new revision: it changes only with the model.
PREVIOUS_ANNOTATION = "tfrecord-pipeline.dev/previous-version"
SCHEMES = ("s3", "gs")  # what the storage initializer downloads, and we write
NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
GRANTS = kube.Grants("kubeflow/manifests/kserve-rbac.yaml",
                     "kubeflow/manifests/kserve-rbac-kubeflow-edit.yaml",
                     "install KServe v0.15 to v0.20 (docs/kubeflow.md, \"Serving on KServe\")")


@dataclasses.dataclass(frozen=True)
class Target:
  """Where and how a pipeline's versions are served.

  Attributes:
    name: the InferenceService's name (a DNS-1035 label).
    mode: `knative` (canaries) or `standard`.
    canary_percent: a new version's share of traffic while the one before
      keeps the rest; 0 rolls it out at once.
    service_account: the predictor's, carrying the S3 Secret; "" for none.
    image: the TF Serving image the predictor runs.
    ready_seconds: how long a deploy waits for the new version's revision
      to be Ready (serving/kserve_ready.py).
  """
  name: str
  mode: str = "knative"
  canary_percent: int = 0
  service_account: str = ""
  image: str = IMAGE
  ready_seconds: int = kserve_ready.DEFAULT_SECONDS

  def __post_init__(self):
    # The validating webhook's name rule (inference_service_validation.go:469-474).
    if not NAME.match(self.name) or len(self.name) > 45:
      # Knative's revision <name>-predictor-<5 digits> must stay a DNS label.
      raise ValueError(f"--kserve: expected an InferenceService name of at most 45 "
                       f"lower-case letters, digits and '-', starting with a letter, found "
                       f"{self.name!r}")
    if self.mode not in MODES:
      raise ValueError(f"--kserve-mode: expected one of {', '.join(MODES)}, found {self.mode!r}")
    if not 0 <= self.canary_percent < 100:
      raise ValueError("--kserve-canary-percent: expected 0 (no canary) to 99, found "
                       f"{self.canary_percent}")
    if self.ready_seconds < 1:
      raise ValueError(f"--kserve-ready-seconds: expected at least 1, found {self.ready_seconds}")
    if self.canary_percent and self.mode != "knative":
      raise ValueError("--kserve-canary-percent: a canary needs --kserve-mode knative: KServe "
                       "v0.20.0's Standard mode ignores canaryTrafficPercent, and its "
                       "spec.canary[] splits replicas, not traffic")


def refuse_local(serving_dir: str) -> None:
  """Refuses a serving dir KServe cannot download from, before anything is written."""
  if storage.scheme(serving_dir) not in SCHEMES:
    # The controller takes a path without a scheme, but the storage
    # initializer's container cannot see it: "Cannot recognize storage
    # type" (kserve_storage.py:175-241), and the revision never gets ready.
    raise serving.ServingError(
        f"--serving-dir {serving_dir}: KServe downloads a model from s3:// or gs://, not "
        "from a folder of this machine; serve from a bucket")


def stage(serving_dir: str, version: str) -> str:
  """Copies a version to where KServe downloads it from, unless there; its URI.
  `saved_model.pb` is written last, as a push writes it (serving/__init__.py)."""
  refuse_local(serving_dir)
  source = os.path.join(serving_dir, version)
  if not storage.gfile().exists(os.path.join(source, serving.SAVED_MODEL)):
    raise serving.ServingError(f"no version {version} in {serving_dir}")
  target = os.path.join(serving_dir, STAGED, version, version)
  if not storage.gfile().exists(os.path.join(target, serving.SAVED_MODEL)):
    serving.copy_tree(source, target, last=serving.SAVED_MODEL)
  return os.path.join(serving_dir, STAGED, version) + "/"  # holds just <version>/


def body(target: Target, namespace: str, storage_uri: str) -> dict:
  """A new InferenceService serving `storage_uri` (no canary: none serves yet)."""
  predictor = {"model": {"modelFormat": {"name": "tensorflow", "version": "2"},
                         "runtime": RUNTIME, "storageUri": storage_uri,
                         "image": target.image}}
  if target.service_account:
    predictor["serviceAccountName"] = target.service_account
  return {"apiVersion": f"{GROUP}/{API_VERSION}", "kind": "InferenceService",
          "metadata": {"name": target.name, "namespace": namespace,
                       "annotations": kserve_modes.created(target.mode)},
          "spec": {"predictor": predictor}}


def served_version(found: dict) -> str:
  """The serving-dir version an InferenceService's spec names (its storageUri's)."""
  uri = found["spec"]["predictor"].get("model", {}).get("storageUri", "")
  return os.path.basename(uri.rstrip("/")) if f"/{STAGED}/" in uri else ""


class KServe:
  """One InferenceService of a cluster's namespace."""

  def __init__(self, target: Target, cluster: Optional[kube.Cluster] = None):
    self.target = target
    self.cluster = cluster or kube.Cluster(GRANTS)
    self.path = (f"/apis/{GROUP}/{API_VERSION}/namespaces/{self.cluster.namespace}/"
                 f"{PLURAL}/{target.name}")

  def get(self) -> Optional[dict]:
    return self.cluster.call(f"get {PLURAL}.{GROUP} {self.target.name}",
                             self.cluster.custom.get_namespaced_custom_object, GROUP,
                             API_VERSION, self.cluster.namespace, PLURAL, self.target.name,
                             missing_ok=True)

  def patch(self, change: dict, why: str, dry_run: bool = False) -> dict:
    """A merge patch; as a dry run, through the webhooks and the rights
    only, nothing stored (`dryRun=All`)."""
    why += ", a dry run" if dry_run else ""
    return self.cluster.send(f"patch {PLURAL}.{GROUP} {self.target.name} ({why})", "PATCH",
                             self.path, change, "application/merge-patch+json",
                             query=[("dryRun", "All")] if dry_run else ())

  def _refuse_mode_change(self, found: dict) -> None:
    kserve_modes.refuse_change(found, self.target.name, self.target.mode)

  def deploy(self, serving_dir: str, version: str) -> str:
    """Points the InferenceService at `version`: created, as a canary beside
    the version it serves, or outright; then waits until its revision is
    Ready and says what takes the traffic (kserve_ready.py).

    Raises:
      serving.ServingError: the revision failed or is not Ready in time.
    """
    storage_uri, found = stage(serving_dir, version), self.get()
    name, mode = self.target.name, self.target.mode
    if found is None:
      kube.create(self.cluster, GROUP, API_VERSION, PLURAL,
                  body(self.target, self.cluster.namespace, storage_uri))
      self.wait(None if mode == "standard" else "", version, 0)
      return (f"kserve: created InferenceService {name}: serves version {version} (100%, "
              f"{MODES[mode]} mode)")
    self._refuse_mode_change(found)
    annotations = found["metadata"].get("annotations", {})
    served = served_version(found)
    if served == version:
      # Said from the status: the spec may name it at 0% (a rollback) or
      # as a canary, or name a revision that never got Ready.
      why = kserve_ready.failure(found)
      if why:
        raise serving.ServingError(f"kserve: InferenceService {name} names version {version}, "
                                   f"which did not get Ready: {why}")
      line = kserve_ready.serving_line(found, name, version,
                                       annotations.get(PREVIOUS_ANNOTATION, ""), mode)
      return line.replace("serves version", "already serves version")
    canary = self.target.canary_percent
    # A canary replacing a canary: the rest stays with the one rolled out before both.
    in_flight = found["spec"]["predictor"].get("canaryTrafficPercent") is not None
    rolled_out = annotations.get(PREVIOUS_ANNOTATION) if in_flight else served
    # The recorded mode written back: an object created with `Knative` on
    # v0.15.2, which recorded `Serverless`, takes updates again.
    written = {PREVIOUS_ANNOTATION: rolled_out, **kserve_modes.kept(found)}
    before = kserve_ready.predictor_status(found).get("latestCreatedRevision", "")
    generation = found.get("status", {}).get("observedGeneration")  # Standard mode's
    account = {"serviceAccountName": a} if (a := self.target.service_account) else {}
    self.patch({"metadata": {"annotations": written},
                 "spec": {"predictor": {"canaryTrafficPercent": canary or None, "model": {
                     "storageUri": storage_uri, "image": self.target.image}, **account}}},
                f"serve {version}")
    return kserve_ready.serving_line(self.wait(None if mode == "standard" else before, version,
                                               generation), name, version, rolled_out or "", mode)

  def wait(self, before, version: str, generation=None) -> dict:
    return kserve_ready.wait(self.found, before, self.target.name, version,
                             self.target.ready_seconds, generation=generation)

  def promote(self) -> str:
    """The canary takes all traffic: the field changes, and the mode
    annotation is written as recorded (refused otherwise where they differ,
    kserve_modes.py), so no new revision starts where they agree."""
    found = self.found()
    version = served_version(found)
    if found["spec"]["predictor"].get("canaryTrafficPercent") is None:
      return (f"kserve: InferenceService {self.target.name} has no canary; version {version} "
              "already takes all traffic")
    self.patch({"metadata": {"annotations": kserve_modes.kept(found)},
                 "spec": {"predictor": {"canaryTrafficPercent": None}}}, "promote")
    return f"kserve: version {version} promoted to all traffic"

  def found(self) -> dict:
    found = self.get()
    if found is None:
      raise kube.ClusterError(f"no InferenceService {self.target.name} in namespace "
                              f"{self.cluster.namespace}: deploy a version first")
    return found

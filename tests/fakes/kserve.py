"""KServe v0.20.0 as a STAND-IN: its InferenceService webhooks and the part of
its controller a deploy meets, in Knative mode, acting on kubernetes_api.py's
objects. No cluster, Knative or TF Serving runs here. With the store's
`kserve_version` "0.15", v0.15.2's CRD and deployment-mode rules instead
(kserve_versions.py, cited there); the other rules stay v0.20.0's.

From kserve/kserve at v0.20.0 (file:line at that tag):
- the defaulter (pkg/apis/serving/v1beta1/inference_service_defaults.go):
  the mode annotation (kserve_versions.py); `predictor.tensorflow` becomes
  `predictor.model` with modelFormat tensorflow (:236-237, :296-303); a
  model's format is added as the annotation `modelFormat` (:273-283);
- the validator (inference_service_validation.go), its errors verbatim: the
  name (:469-474, component.go:44); exactly one implementation in the
  predictor (:157-165, component.go:441-451); replicas (component.go:374-
  413); `spec.canary` only in Standard mode, and on update the deployment
  mode fixed once the status records it (kserve_versions.py). Not
  modelled: blocked env vars, multi-node, logger, autoscaler rules,
  storage URIs (checked by the controller, not at admission);
- the controller in Knative mode: each new spec is a new revision
  `<name>-predictor-<generation, 5 digits>` (Knative's naming), ready once
  its model loads; the route (reconcilers/knative/ksvc_reconciler.go:123-164):
  with `canaryTrafficPercent` and a rolled-out revision, the latest ready
  revision gets that share and the last rolled-out one (tag `prev`) the
  rest, else the latest ready revision all; the bookkeeping
  (inference_service_status.go:567-636): a latest ready revision at 100%
  becomes the rolled-out one, the one before it the previous; `Ready` is
  PredictorReady and IngressReady (:295-298); `status.deploymentMode`
  (kserve_versions.py) and the finalizer (controller.go:177-214). At
  v0.15.2 the route and the bookkeeping are the same (ksvc_reconciler.go:
  117-146, inference_service_status.go:457-481).
- the storage initializer: `storageUri` downloaded as kserve-storage does it
  (python/storage/kserve_storage/kserve_storage.py:533, 543-553: an S3
  prefix matched unanchored, each key's remainder under /mnt/models; a
  folder of the caller's machine, nothing), with only what the predictor's
  service account gives it (kserve_storage.py here: its Secrets' keys and
  annotations, HTTPS unless told otherwise), and TF Serving then needs
  `<number>/saved_model.pb` there (`--model_base_path=/mnt/models`,
  config/runtimes/kserve-tensorflow-serving.yaml:27-32). A revision whose
  download fails or holds no such version never becomes ready, and the
  traffic stays where it was; its status as KServe reports it
  (kserve_storage.reported, cited there).
Not modelled: Standard mode's Deployments, pods, finalizers holding a
deletion, TF Serving answering requests, Knative's own retries of a
failing pod (here one download per revision).
"""

import contextlib
import json
import os
import re
import time
from typing import List, Optional

from tests.fakes import kserve_storage
from tests.fakes.kserve_versions import RELEASES

GROUP_VERSION, PLURAL = "serving.kserve.io/v1beta1", "inferenceservices"
WEBHOOK = "inferenceservice.kserve-webhook-server.validator"
MODE = "serving.kserve.io/deploymentMode"
NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
IMPLEMENTATIONS = ["Name", "SKLearn", "XGBoost", "Tensorflow", "PyTorch", "Triton", "ONNX",
                   "HuggingFace", "PMML", "LightGBM", "Paddle", "Model", "StorageUris",
                   "StorageContainerName", "WorkerSpec", "PodSpec"]
FIELDS = {"Tensorflow": "tensorflow", "SKLearn": "sklearn", "XGBoost": "xgboost",
          "PyTorch": "pytorch", "Triton": "triton", "ONNX": "onnx",
          "HuggingFace": "huggingface", "PMML": "pmml", "LightGBM": "lightgbm",
          "Paddle": "paddle", "Model": "model", "StorageUris": "storageUris",
          "WorkerSpec": "workerSpec"}


def mutate(body: dict, version: str = "0.20") -> dict:
  """The defaulting webhook (inference_service_defaults.go:163-214)."""
  annotations = body.setdefault("metadata", {}).setdefault("annotations", {})
  RELEASES[version].defaulted(annotations)
  predictor = body.get("spec", {}).get("predictor", {})
  if "tensorflow" in predictor:
    predictor["model"] = {**predictor.pop("tensorflow"), "modelFormat": {"name": "tensorflow"}}
  name = predictor.get("model", {}).get("modelFormat", {}).get("name")
  if name:
    annotations.setdefault("modelFormat", name)
  return body


def problems(body: dict, old: Optional[dict], version: str = "0.20") -> List[str]:
  """The validating webhook's refusal, its first error only (it stops there)."""
  name = body.get("metadata", {}).get("name", "")
  release = RELEASES[version]
  if old is not None:
    if old.get("metadata", {}).get("deletionTimestamp"):
      return []
    refused = release.mode_change(old, body["metadata"].get("annotations", {}))
    if refused:
      return [refused]
  if not NAME.match(name):
    return [f'the InferenceService "{name}" is invalid: a InferenceService name must consist '
            "of lower case alphanumeric characters or '-', and must start with alphabetical "
            'character. (e.g. "my-name" or "abc-123", regex used for validation is '
            "'[a-z]([-a-z0-9]*[a-z0-9])?')"]
  spec = body.get("spec", {})
  predictor = spec.get("predictor", {})
  found = [k for k, field in FIELDS.items() if predictor.get(field)]
  if len(found) != 1:
    return [f"exactly one of [{', '.join(IMPLEMENTATIONS)}] must be specified in "
            "PredictorSpec"]
  low, high = predictor.get("minReplicas", 1), predictor.get("maxReplicas", 0)
  if low < 0:
    return ["'MinReplicas' cannot be less than 0"]
  if high < 0:
    return ["'MaxReplicas' cannot be less than 0"]
  if high and low > high:
    return ["'MinReplicas' cannot be greater than MaxReplicas"]
  if (release.canary_field and spec.get("canary")
      and body["metadata"].get("annotations", {}).get(MODE) != "Standard"):
    return ["canary is only supported in Standard deployment mode"]
  return []


# Annotations KServe does not copy into the revision's template
# (pkg/constants/constants.go:534-540; the scale ones are Knative's).
NOT_IN_REVISION = {"autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/max-scale",
                   "internal.serving.kserve.io/storage-initializer-sourceuri",
                   "kubectl.kubernetes.io/last-applied-configuration", "modelFormat"}


def revision_template(obj: dict) -> str:
  """What makes a new Knative revision: the predictor but its traffic
  share, and the annotations KServe copies (components/predictor.go:100-102,
  513-517; ksvc_reconciler.go:199-205)."""
  predictor = {k: v for k, v in obj["spec"]["predictor"].items()
               if k != "canaryTrafficPercent"}
  annotations = {k: v for k, v in obj["metadata"].get("annotations", {}).items()
                 if k not in NOT_IN_REVISION}
  return json.dumps([predictor, annotations], sort_keys=True)


class Controller:
  """Reconciles every InferenceService after each change, as KServe's does."""

  def __init__(self, store):  # a kubernetes_api.Store, which imports this module
    self.store = store
    # (namespace, name) -> [(revision, storageUri, ready, template, failure)]
    self.revisions = {}
    self.seen = {}  # (namespace, name) -> the metadata.generation reconciled
    store.after_write.append(self.on_write)

  def on_write(self, key: tuple) -> None:
    obj = self.store.get(key)
    if obj is not None and key[0] == GROUP_VERSION and key[2] == PLURAL:
      self.reconcile(key, obj)

  def download(self, namespace: str, predictor: dict) -> tuple:
    """(ready, the storage initializer's failure) of a new revision."""
    try:
      env = kserve_storage.initializer_env(self.store, namespace,
                                           predictor.get("serviceAccountName", ""),
                                           self.store.kserve_version)
      return kserve_storage.serves(predictor["model"]["storageUri"], env), ""
    except kserve_storage.InitializerFailed as e:
      return False, str(e)

  def reconcile(self, key: tuple, obj: dict) -> None:
    meta, predictor = obj["metadata"], obj["spec"]["predictor"]
    release = RELEASES[self.store.kserve_version]
    mode = release.running(obj.get("status", {}).get("deploymentMode", ""),
                           meta.get("annotations", {}))
    revisions = self.revisions.setdefault(key[1:4:2], [])
    template = revision_template(obj)
    if not revisions or revisions[-1][3] != template:
      # Knative numbers a revision by its Configuration's generation, which
      # grows with each new template.
      name = f"{meta['name']}-predictor-{len(revisions) + 1:05d}"
      ready, failure = self.download(key[1], predictor)
      revisions.append((name, predictor["model"]["storageUri"], ready, template, failure))
    if mode == release.standard:  # its Deployments are not modelled
      # The mode is recorded in every mode (controller.go@v0.20.0:413,
      # 421-425; @v0.15.2:308, 316-320), so the webhook's rule applies.
      condition, model = kserve_storage.reported(revisions[-1][4], revisions[-1][0], revisions[-1][2], "")
      if not revisions[-1][2] and any(r[2] for r in revisions[:-1]):
        # A rolling update (maxUnavailable 25%, deployment_reconciler.go@
        # v0.20.0:343-348) keeps the old pod: the Deployment stays Available,
        # so Ready stays True (status.go:379-387, 413) while modelStatus,
        # read from the newest pod, says it failed (:751-779).
        condition = {"type": "PredictorReady", "status": "True"}
      conditions = [condition, {**condition, "type": "Ready"}]
      # observedGeneration is the predictor Deployment's (inference_service_
      # status.go@v0.20.0:456, @v0.15.2:354): one more per new pod template.
      self.store.update(key, lambda o: o.setdefault("status", {}).update(
          deploymentMode=mode, conditions=conditions, modelStatus=model,
          observedGeneration=len(revisions)))
      self.seen[key[1:4:2]] = meta.get("generation", 1)
      return
    status = obj.get("status", {})
    component = dict(status.get("components", {}).get("predictor", {}))
    ready = [r for r in revisions if r[2]]
    latest_ready = ready[-1][0] if ready else ""
    rolled = component.get("latestRolledoutRevision", "")
    percent = predictor.get("canaryTrafficPercent")
    if percent is not None and rolled:  # ksvc_reconciler.go:134-153
      traffic = [{"revisionName": latest_ready, "latestRevision": True, "percent": percent}]
      if percent < 100:
        traffic.append({"revisionName": rolled, "latestRevision": False,
                        "percent": 100 - percent, "tag": "prev"})
    else:  # :154-164
      traffic = [{"revisionName": latest_ready, "latestRevision": True, "percent": 100}]
    traffic = [t for t in traffic if t["revisionName"]]
    for t in traffic:  # inference_service_status.go:582-603
      if not (t["latestRevision"] and t["revisionName"] == latest_ready):
        continue
      if rolled != latest_ready and t["percent"] == 100:
        component["previousRolledoutRevision"] = rolled
        component["latestRolledoutRevision"] = rolled = latest_ready
      elif (latest_ready == revisions[-1][0] and t["percent"] < 100
            and sum(u["percent"] for u in traffic if u["revisionName"] == latest_ready) == 100
            and component.get("previousRolledoutRevision")):
        component["latestRolledoutRevision"] = component["previousRolledoutRevision"]
    component.update(latestCreatedRevision=revisions[-1][0], latestReadyRevision=latest_ready,
                     traffic=traffic)
    name, _, created_ready, _, failure = revisions[-1]
    url = f"http://{meta['name']}.{key[1]}.example.com"
    predictor_ready, model = kserve_storage.reported(failure, name, created_ready, latest_ready)
    ingress = {"type": "IngressReady", "status": "True" if latest_ready else "False"}
    conditions = [predictor_ready, ingress, {**predictor_ready, "type": "Ready"}]
    # observedGeneration is the Knative Service's (inference_service_status.go:635).
    # No URL until a revision is ready; the CRD refuses a null one.
    new_status = {**{k: v for k, v in status.items() if k != "url"},
                  **({"url": url} if latest_ready else {}),
                  "components": {"predictor": component}, "conditions": conditions,
                  "deploymentMode": mode, "modelStatus": model,
                  "clusterServingRuntimeName": "kserve-tensorflow-serving",
                  "observedGeneration": len(revisions)}

    def change(o):
      o["status"] = new_status
      o["metadata"].setdefault("finalizers", ["inferenceservice.finalizers"])
    self.store.update(key, change)
    self.seen[key[1:4:2]] = meta.get("generation", 1)


@contextlib.contextmanager
def standin(folder: str, namespace: str, version: str = "0.20"):
  """The stand-in API server with KServe `version` (a key of RELEASES)
  installed and its controller: yields (store, the path of a kubeconfig
  naming `namespace`)."""
  from tests.fakes import kubernetes_api
  store = kubernetes_api.Store({PLURAL}, kserve_version=version)
  Controller(store)
  server = kubernetes_api.serve(store)
  path = os.path.join(folder, "kubeconfig")
  with open(path, "w") as f:
    f.write(kubernetes_api.kubeconfig(server, namespace))
  try:
    yield store, path
  finally:
    server.shutdown()


def reconciled(store, namespace: str, name: str, seconds: float = 60) -> dict:
  """The InferenceService once the controller has reconciled its spec (it
  runs after the API's answer, as a controller does)."""
  key = (GROUP_VERSION, namespace, PLURAL, name)
  deadline = time.monotonic() + seconds
  while True:
    obj = store.get(key)
    (controller,) = [h.__self__ for h in store.after_write if isinstance(h.__self__, Controller)]
    if obj and controller.seen.get((namespace, name)) == obj["metadata"]["generation"]:
      return obj
    if time.monotonic() > deadline:
      raise AssertionError(f"expected the controller to reconcile {name} within {seconds} s, "
                           f"found {obj}")
    time.sleep(0.05)


def traffic(store, namespace: str, name: str) -> list:
  """(percent, the serving-dir version its revision serves) of each route."""
  obj = reconciled(store, namespace, name)
  (controller,) = [h.__self__ for h in store.after_write if isinstance(h.__self__, Controller)]
  versions = {revision[0]: os.path.basename(revision[1].rstrip("/"))
              for revision in controller.revisions[(namespace, name)]}
  return sorted((t["percent"], versions[t["revisionName"]])
                for t in obj["status"]["components"]["predictor"]["traffic"])

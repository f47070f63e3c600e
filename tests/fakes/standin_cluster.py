"""The stand-in cluster, put together: a Kubernetes API server
(kubernetes_api.py), the engines' controllers (training_engines.py), KServe
(kserve.py), the shipped TrainingRuntime installed, and a run's Argo
Workflow owning the Trainer step's pod. Used by tests/e2e/test_train_workers.py,
tests/e2e/test_kubeflow_steps.py and bench/workers_bench.py.
"""

import json
import os
import subprocess
import sys
import uuid
from typing import Dict, Optional

import yaml

from tests.fakes import kserve, kubernetes_api, training_engines

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = "kubeflow"
WORKFLOW = "digits-run-1"
# The Trainer step's pod, of the run's Workflow, named as Argo names a KFP
# step's pod: longer than the 63 characters a hostname keeps.
STEP_POD = "tfrecord-pipeline-digits-20261127090512-4xk2f-system-container-impl-2954107621"
RUNTIME_KEY = ("trainer.kubeflow.org/v1alpha1", NAMESPACE, "trainingruntimes",
               "tfrecord-pipeline-tensorflow")


def pod_env(pod_name: str) -> Dict[str, str]:
  """What a KFP step's container knows of its pod's name: KFP_POD_NAME from
  the downward API (KFP's argocompiler, commonEnvs) and HOSTNAME, which
  Kubernetes cuts to 63 characters."""
  return {"KFP_POD_NAME": pod_name, "HOSTNAME": pod_name[:63]}


class StandInCluster:
  """Start with `with StandInCluster(folder) as cluster:`; pods' logs go to
  `folder`; KServe's rules are `kserve_version`'s (kserve_versions.RELEASES).
  With `identities` (service account -> its storage credentials), worker
  pods reach storage only as their account (training_engines.py), and the
  Trainer step's pod runs as `step_account`."""

  def __init__(self, folder: str, kserve_version: str = "0.20",
               identities: Optional[Dict[str, Dict[str, str]]] = None,
               step_account: str = ""):
    self.folder, self.step_account = folder, step_account
    self.store = kubernetes_api.Store({"trainjobs", "trainingruntimes", "tfjobs", "workflows",
                                         "configmaps", kserve.PLURAL},
                                        kserve_version=kserve_version)
    self.kserve = kserve.Controller(self.store)  # Knative mode
    # The pods' environment: this process's, without what a pod would not have.
    self.env = {k: v for k, v in os.environ.items()
                if k not in ("TF_CONFIG", "TF_USE_LEGACY_KERAS", "KUBECONFIG")}
    self.controllers = training_engines.Controllers(self.store, folder,
                                                    {**self.env, "PYTHONPATH": REPO},
                                                    identities=identities)

  def __enter__(self) -> "StandInCluster":
    self.server = kubernetes_api.serve(self.store)
    self.controllers.start()
    with open(os.path.join(REPO, "kubeflow", "manifests", "trainingruntime.yaml")) as f:
      self.store.create(RUNTIME_KEY, yaml.safe_load(f))
    self.add_pod(self.add_workflow(WORKFLOW), "trainer", "", name=STEP_POD,
                 account=self.step_account)
    self.kubeconfig = os.path.join(self.folder, "kubeconfig")
    with open(self.kubeconfig, "w") as f:
      f.write(kubernetes_api.kubeconfig(self.server, NAMESPACE))
    return self

  def add_workflow(self, name: str) -> dict:
    """A run's Argo Workflow."""
    return self.store.create(("argoproj.io/v1alpha1", NAMESPACE, "workflows", name),
                             {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow"})

  def add_pod(self, workflow: dict, task: str, image: str, name: str = "",
              account: str = "") -> str:
    """A step's pod, owned by its run's Workflow and named as Argo names a
    KFP step's (workflow, template, hash), running as `account` when given
    (the namespace's `default` otherwise); its name."""
    run = workflow["metadata"]["name"]
    name = name or f"{run}-system-container-impl-{uuid.uuid4().int % 10**10:010d}"
    self.store.create(("v1", NAMESPACE, "pods", name), {
        "metadata": {"annotations": {"workflows.argoproj.io/node-name": f"{run}.{task}"},
                     "ownerReferences": [{
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "name": workflow["metadata"]["name"], "uid": workflow["metadata"]["uid"]}]},
        "spec": {"containers": [{"name": "main", "image": image or "stand-in"}],
                 **({"serviceAccountName": account} if account else {})},
        "status": {"phase": "Running"}})
    return name

  def __exit__(self, *exc) -> None:
    self.controllers.stop()
    self.server.shutdown()

  def start_step(self, inputs: str, pod: Optional[Dict] = None) -> subprocess.Popen:
    """The Trainer step's launching half (tests/trainer_step.py) on `inputs`,
    with the step pod's environment; its output piped."""
    pod = pod or {"image": "registry.example/tfrecord-pipeline:test", "env": {"STAND_IN": "1"}}
    env = {**self.env, "KUBECONFIG": self.kubeconfig, **pod_env(STEP_POD),
           "TRAIN_JOB_POD": json.dumps(pod)}
    return subprocess.Popen([sys.executable, "-m", "tests.trainer_step", inputs], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)

  def worker(self, index: int) -> Optional[training_engines.Pod]:
    """The pod of worker `index` of the one job, once it was started."""
    jobs = list(self.controllers.jobs.values())
    pods = jobs[0]["pods"] if jobs else []
    return pods[index] if len(pods) > index else None

  def worker_log(self, index: int) -> str:
    pod = self.worker(index)
    return pod.log()[0] if pod else ""

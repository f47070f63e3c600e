"""A compiled spec and a stand-in install for `doctor`'s tests: `spec`
writes what compile writes (the pipeline spec, its platform config, and
kfp-launcher.yaml, by kubeflow/compile/launcher_config.py itself) with only
the parts doctor reads; `Install` is a stand-in Kubernetes API
(tests/fakes/kubernetes_api.py) set up as a clean install for that spec,
which each test then breaks in one place."""

import json
import os
from typing import Dict, List, Optional, Tuple

import yaml

from kubeflow import profile_paths
from kubeflow.compile import launcher_config
from tests.fakes import kserve_storage, kubernetes_api, rbac
from trainer.jobs.job import POD_ENV

ENDPOINT = "http://seaweedfs.kubeflow:9000"
SECRET = profile_paths.SECRET
KEYS = {"accesskey": launcher_config.ACCESS, "secretkey": launcher_config.SECRET}
# The user's rights: by default a cluster admin's (cluster-admin: every verb
# on everything); READER's lack Secrets and SubjectAccessReviews.
ADMIN = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
READER = [{"apiGroups": ["", "trainer.kubeflow.org"], "verbs": ["get", "list"],
           "resources": ["configmaps", "trainingruntimes"]}]
# A GPU node pool as a managed cluster labels and taints it (GKE's
# cloud.google.com/gke-accelerator label and nvidia.com/gpu taint), each
# node advertising its GPUs through NVIDIA's device plugin.
POOL = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spec(folder, namespace: Optional[str] = "team-a", root: str = "",
         engine: str = "", kserve: bool = False, endpoint: str = ENDPOINT,
         worker_pod: Optional[Dict] = None, gpus: Optional[Dict[str, Dict]] = None,
         kserve_mode: str = "knative", kserve_account: str = "s3-reader",
         serving_dir: str = "") -> str:
  """Writes a compiled spec into `folder` (the digits' first step, the
  Trainer, KServeDeploy when `kserve`, InferenceService `digits` in
  `kserve_mode`, its predictor's account `kserve_account`, the serving dir
  `serving_dir`, else one beside the data root); its path. `worker_pod`: the Trainer's TRAIN_JOB_POD, as
  kubeflow/compile/train_job.py writes it; `gpus`: step -> {"count",
  "nodeSelector", "tolerations"}, as `--resource STEP:gpus=N` and the
  platform flags write them."""
  profile = namespace if namespace and namespace != "kubeflow" else None
  root = root or (f"s3://mlpipeline/private/{namespace}/p" if profile else "s3://mlpipeline/p")
  place = f"s3://mlpipeline/private/{namespace}" if profile else "s3://mlpipeline"
  env = {"S3_ENDPOINT": endpoint, **({profile_paths.PROFILE_ENV: profile} if profile else {})}
  secret_env = [(SECRET, key, var) for key, var in KEYS.items()]
  tasks = {"ImportExampleGen": {}, "Trainer": {"dependentTasks": ["ImportExampleGen"],
      "inputs": {"parameters": {"custom_config": {"runtimeValue": {"constant": json.dumps(
          {"workers": {"count": 2 if engine else 1, "engine": engine}})}}}}}}
  if kserve:
    tasks["KServeDeploy"] = {"dependentTasks": ["Trainer"], "inputs": {"parameters": {
        "target": {"runtimeValue": {"constant": json.dumps(
            {"name": "digits", "mode": kserve_mode,
             "service_account": kserve_account})}}}}}
  container = {"image": "r/i:1", "env": [{"name": k, "value": v} for k, v in env.items()]}
  containers = {t: json.loads(json.dumps(container)) for t in tasks}
  if worker_pod is not None:
    containers["Trainer"]["env"].append({"name": POD_ENV, "value": json.dumps(worker_pod)})
  placed = {}
  for t, wanted in (gpus or {}).items():
    containers[t]["resources"] = {"accelerator": {"type": "nvidia.com/gpu",
                                                  "count": str(wanted["count"])}}
    placed[t] = {k: v for k, v in (("nodeSelector", {"labels": wanted.get("nodeSelector")}),
                                   ("tolerations", wanted.get("tolerations"))) if v}
  document = {
      "pipelineInfo": {"name": "digits"}, "defaultPipelineRoot": root,
      "root": {"dag": {"tasks": {t: {"componentRef": {"name": t}, **v}
                                 for t, v in tasks.items()}},
               "inputDefinitions": {"parameters": {
                   "data_root": {"defaultValue": f"{place}/d", "parameterType": "STRING"},
                   "serving_dir": {"defaultValue": serving_dir or f"{place}/serving",
                                   "parameterType": "STRING"}}}},
      "components": {t: {"executorLabel": f"{t}_executor"} for t in tasks},
      "deploymentSpec": {"executors": {f"{t}_executor": {"container": containers[t]}
                                       for t in tasks}}}
  platform = {"platforms": {"kubernetes": {"deploymentSpec": {"executors": {
      f"{t}_executor": {"secretAsEnv": [{"secretName": SECRET, "keyToEnv": [
          {"secretKey": k, "envVar": v} for k, v in KEYS.items()]}], **placed.get(t, {})}
      for t in tasks}}}}}
  os.makedirs(folder, exist_ok=True)
  path = os.path.join(folder, "pipeline.yaml")
  with open(path, "w", encoding="utf-8") as f:
    f.write(yaml.safe_dump_all([document, platform]))
  launcher_config.write(str(folder), launcher_config.configmap(root, env, secret_env))
  return path


class Install:
  """A clean stand-in install for `spec_path` in `namespace`, as the user's
  kubeconfig reaches it: its ConfigMap applied, its Secret, the TrainingRuntime,
  the Trainer's RBAC, KServe and its predictor's account s3-reader. `with Install(...) as install:` sets KUBECONFIG
  (monkeypatch); `install.store` is the stand-in's, to break."""

  def __init__(self, folder, monkeypatch, namespace: str = "team-a",
               user: str = "admin", spec_path: str = "", user_rules=ADMIN,
               trainer_version: str = "2.3", kserve_version: str = "0.20"):
    self.folder, self.monkeypatch, self.namespace, self.user = folder, monkeypatch, namespace, user
    self.store = kubernetes_api.Store({"configmaps", "secrets", "trainjobs", "trainingruntimes",
                                       "tfjobs", "inferenceservices"},
                                      trainer_version=trainer_version,
                                      kserve_version=kserve_version)
    self.node("cpu-0", 0, {}, [])
    for i in range(2):  # the GPU pool: two nodes of 2 GPUs
      self.node(f"gpu-{i}", 2, POOL, [GPU_TAINT])
    launcher = os.path.join(os.path.dirname(spec_path or os.path.join(folder, "x")),
                            launcher_config.FILE)
    if os.path.exists(launcher):
      with open(launcher, encoding="utf-8") as f:
        self.store.create(("v1", namespace, "configmaps", launcher_config.NAME),
                          yaml.safe_load(f))
    self.store.secrets[SECRET] = {key: "stand-in" for key in KEYS}
    kserve_storage.add_s3_account(self.store, namespace, ENDPOINT)
    with open(os.path.join(REPO, "kubeflow", "manifests", "trainingruntime.yaml")) as f:
      self.store.create(("trainer.kubeflow.org/v1alpha1", namespace, "trainingruntimes",
                         "tfrecord-pipeline-tensorflow"), yaml.safe_load(f))
    with open(os.path.join(REPO, "kubeflow", "manifests", "trainer-rbac.yaml")) as f:
      rbac.apply(self.store, [d for d in yaml.safe_load_all(f) if d], namespace)
    rbac.apply(self.store, [
        {"kind": "ClusterRole", "metadata": {"name": "user"}, "rules": user_rules},
        {"kind": "ClusterRoleBinding", "metadata": {"name": "user"},
         "roleRef": {"kind": "ClusterRole", "name": "user"},
         "subjects": [{"kind": "ServiceAccount", "name": user, "namespace": namespace}]}], "")
    self.store.rbac = True

  def __enter__(self) -> "Install":
    self.server = kubernetes_api.serve(self.store)
    self.kubeconfig = os.path.join(str(self.folder), "kubeconfig")
    with open(self.kubeconfig, "w", encoding="utf-8") as f:
      f.write(kubernetes_api.kubeconfig(self.server, self.namespace, account=self.user))
    self.monkeypatch.setenv("KUBECONFIG", self.kubeconfig)
    return self

  def __exit__(self, *exc) -> None:
    self.server.shutdown()

  def node(self, name: str, gpus: int, labels: Dict[str, str], taints: List[Dict]) -> None:
    """A node as the API serves it (tests/fakes/kubernetes_api.py)."""
    allocatable = {"cpu": "8", "memory": "32Gi", **({"nvidia.com/gpu": str(gpus)} if gpus
                                                     else {})}
    self.store.create(("v1", "", "nodes", name), {
        "apiVersion": "v1", "kind": "Node", "metadata": {"labels": dict(labels)},
        "spec": {"taints": list(taints)} if taints else {},
        "status": {"allocatable": allocatable}})

  def uninstall(self, plural: str) -> None:
    """The CRD of `plural` gone: its API no longer served."""
    self.store.installed.discard(plural)


def doctor(capsys, spec_path: str, *flags: str) -> Tuple[int, List[str]]:
  """`python -m commands.kubeflow doctor --spec spec_path *flags`, in this
  process: (its exit status, its lines)."""
  from commands.kubeflow.cli import main
  capsys.readouterr()
  status = main(["doctor", "--spec", spec_path, *flags])
  return status, capsys.readouterr().out.strip().splitlines()


def only(found: List[str], start: str) -> str:
  """The one line of `found` that starts with `start`."""
  (line,) = [x for x in found if x.startswith(start)]
  return line

"""What a compiled spec needs of the install it runs on, read from the
documents `compile` wrote (the pipeline spec, then its Kubernetes platform
config) and the kfp-launcher.yaml it writes beside them
(kubeflow/compile/launcher_config.py). Reads files only.
"""

import dataclasses
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from kubeflow import profile_paths
from kubeflow.compile import launcher_config
from kubeflow.compile import spec as spec_edit
from kubeflow.compile.train_job import NODE as TRAINER
from trainer import jobs
from trainer.jobs import kube as jobs_kube
from trainer.jobs.job import POD_ENV

KSERVE_STEP = "KServeDeploy"  # components/kserve_deploy: compiled with --kserve
# Runtime parameters that name where a run reads and writes.
PLACES = {"data_root": "the data root", "serving_dir": "the serving dir"}


@dataclasses.dataclass(frozen=True)
class GpuPods:
  """Pods that each need GPUs, and where they may run.

  Attributes:
    who: the step, or the Trainer's workers.
    resource: the GPU's resource name, e.g. nvidia.com/gpu.
    count: GPUs per pod.
    pods: how many such pods run at once.
    selector: the node labels each pod must match.
    tolerations: the taints each pod tolerates (PodSpec's form).
  """
  who: str
  resource: str
  count: int
  pods: int
  selector: Dict[str, str]
  tolerations: List[Dict]


@dataclasses.dataclass(frozen=True)
class Needs:
  """What the spec needs.

  Attributes:
    namespace: where its runs go: `--namespace`, else the compiled one, else
      a single-user install's `kubeflow`.
    root: the run's pipeline root (the compiled one).
    places: what each path is -> the URI (the root, the data root and the
      serving dir as compiled).
    env: the first step's environment, as compiled (`--env`).
    secret_env: every step's (secret, key, variable) from `--secret-env`.
    launcher_file: compile's kfp-launcher.yaml beside the spec, if any.
    engine: the Trainer's workers' engine (trainer/jobs), "" for none.
    kserve: whether a step deploys to KServe.
    worker_pod: what each of the Trainer's workers gets (trainer/jobs/job.py
      `pod_spec`, TRAIN_JOB_POD), {} without workers.
    workers: how many workers the engine runs.
    gpus: the pods that need GPUs on the cluster's nodes.
    kserve_target: KServeDeploy's target (serving/kserve.py Target's
      fields), {} without it.
  """
  namespace: str
  root: str
  places: Dict[str, str]
  env: Dict[str, str]
  secret_env: List[Tuple[str, str, str]]
  launcher_file: Optional[str]
  engine: str
  kserve: bool
  worker_pod: Dict = dataclasses.field(default_factory=dict)
  workers: int = 1
  gpus: List[GpuPods] = dataclasses.field(default_factory=list)
  kserve_target: Dict = dataclasses.field(default_factory=dict)

  def launcher(self) -> Optional[Dict]:
    """The kfp-launcher ConfigMap this root needs, as compile writes it;
    None when the launcher needs none (launcher_config.configmap).

    Raises:
      CompileError: the steps' keys do not come from one Secret.
    """
    return launcher_config.configmap(self.root, self.env, self.secret_env)

  def profile(self) -> Optional[str]:
    """The profile namespace whose keys the steps hold, or None."""
    return launcher_config.profile_namespace(self.namespace, self.secret_env)


def _secret_env(platform: Optional[Dict]) -> List[Tuple[str, str, str]]:
  executors = ((platform or {}).get("platforms", {}).get("kubernetes", {})
               .get("deploymentSpec", {}).get("executors", {}))
  return sorted({(entry["secretName"], pair["secretKey"], pair["envVar"])
                 for executor in executors.values()
                 for entry in executor.get("secretAsEnv", [])
                 for pair in entry.get("keyToEnv", [])})


def _constant(steps: Dict, step: str, parameter: str) -> Dict:
  """A step's JSON parameter as compiled ({} for none)."""
  given = steps.get(step, {}).get("inputs", {}).get("parameters", {}).get(parameter, {})
  text = given.get("runtimeValue", {}).get("constant")
  return json.loads(text) if text else {}


def _engine(steps: Dict) -> Tuple[str, int]:
  """The engine in the Trainer's custom_config (trainer/jobs CONFIG_KEY), and its workers."""
  workers = _constant(steps, TRAINER, "custom_config").get(jobs.CONFIG_KEY, {})
  count = int(workers.get("count", 1))
  return (workers.get("engine", "") if count > 1 else ""), count


def _gpus(spec: Dict, steps: Dict, platform: Optional[Dict], engine: str, workers: int,
          worker_pod: Dict) -> List[GpuPods]:
  """Each step's GPUs (its container's accelerator, placed by its platform
  config), and the workers' (their pod's, one pod each)."""
  executors = ((platform or {}).get("platforms", {}).get("kubernetes", {})
               .get("deploymentSpec", {}).get("executors", {}))
  out = []
  for step in steps:
    label = spec["components"][step]["executorLabel"]
    accelerator = spec_edit.container_of(spec, step).get("resources", {}).get("accelerator", {})
    count = int(accelerator.get("count") or accelerator.get("resourceCount") or 0)
    if count:
      placed = executors.get(label, {})
      out.append(GpuPods(f"the step {step}", accelerator.get("type")
                         or accelerator.get("resourceType", ""), count, 1,
                         placed.get("nodeSelector", {}).get("labels", {}),
                         placed.get("tolerations", [])))
  if engine in ("trainjob", "tfjob"):
    for resource, amount in jobs_kube.resources(worker_pod).get("limits", {}).items():
      if resource not in ("cpu", "memory"):
        out.append(GpuPods(f"the {workers} {engine} workers", resource, int(amount), workers,
                           worker_pod.get("nodeSelector", {}),
                           worker_pod.get("tolerations", [])))
  return out


def read(documents: Sequence[Dict], spec_path: str, namespace: Optional[str] = None,
         pipeline_root: Optional[str] = None) -> Needs:
  """What the compiled `documents` (runs.load_spec's) at `spec_path` need,
  sent to `namespace` with `pipeline_root` (default: the compiled ones)."""
  spec = documents[0]
  steps = spec_edit.tasks(spec)
  container = spec_edit.container_of(spec, spec_edit.first_step(steps))
  env = {e["name"]: e.get("value", "") for e in container.get("env", [])}
  root = pipeline_root or spec.get("defaultPipelineRoot", "")
  declared = spec["root"].get("inputDefinitions", {}).get("parameters", {})
  places = {"the pipeline root": root}
  places.update({what: declared[name].get("defaultValue", "")
                 for name, what in PLACES.items() if name in declared})
  beside = os.path.join(os.path.dirname(spec_path), launcher_config.FILE)
  engine, workers = _engine(steps)
  trainer = spec_edit.container_of(spec, TRAINER) if TRAINER in steps else {}
  worker_pod = json.loads(next((e.get("value") or "{}" for e in trainer.get("env", [])
                                if e["name"] == POD_ENV), "{}"))
  platform = documents[1] if len(documents) > 1 else None
  return Needs(
      namespace=namespace or env.get(profile_paths.PROFILE_ENV)
      or profile_paths.SINGLE_USER_NAMESPACE,
      root=root, places={k: v for k, v in places.items() if v}, env=env,
      secret_env=_secret_env(platform),
      launcher_file=beside if os.path.exists(beside) else None,
      engine=engine, kserve=KSERVE_STEP in steps, worker_pod=worker_pod, workers=workers,
      gpus=_gpus(spec, steps, platform, engine, workers, worker_pod),
      kserve_target=_constant(steps, KSERVE_STEP, "target"))

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

KSERVE_STEP = "KServeDeploy"  # components/kserve_deploy: compiled with --kserve
# Runtime parameters that name where a run reads and writes.
PLACES = {"data_root": "the data root", "serving_dir": "the serving dir"}


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
  """
  namespace: str
  root: str
  places: Dict[str, str]
  env: Dict[str, str]
  secret_env: List[Tuple[str, str, str]]
  launcher_file: Optional[str]
  engine: str
  kserve: bool

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


def _engine(steps: Dict) -> str:
  """The engine in the Trainer's custom_config (trainer/jobs CONFIG_KEY)."""
  given = steps.get(TRAINER, {}).get("inputs", {}).get("parameters", {}).get("custom_config", {})
  text = given.get("runtimeValue", {}).get("constant")
  workers = json.loads(text).get(jobs.CONFIG_KEY, {}) if text else {}
  return workers.get("engine", "") if int(workers.get("count", 1)) > 1 else ""


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
  return Needs(
      namespace=namespace or env.get(profile_paths.PROFILE_ENV)
      or profile_paths.SINGLE_USER_NAMESPACE,
      root=root, places={k: v for k, v in places.items() if v}, env=env,
      secret_env=_secret_env(documents[1] if len(documents) > 1 else None),
      launcher_file=beside if os.path.exists(beside) else None,
      engine=_engine(steps), kserve=KSERVE_STEP in steps)

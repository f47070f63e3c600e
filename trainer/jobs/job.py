"""A training job as every engine receives it, and how it fails."""

import dataclasses
import hashlib
import json
import os
from typing import Dict, List, Optional

from runtime.kube import ClusterError  # noqa: F401  (raised by the engines)

POD_ENV = "TRAIN_JOB_POD"  # set by the compiler on the Trainer step (pod_spec below)
QUIET_ENV = "TRAIN_WORKER_QUIET"  # the local engine's, when its runner is quiet


class JobFailed(RuntimeError):
  """The job ended without a model: names the job, the worker and why."""


@dataclasses.dataclass(frozen=True)
class Job:
  """One training job.

  Attributes:
    name: derived from the Trainer's output URI (`name_for`): a retried step
      (same executor input, as Argo retries a pod) gets the same name and so
      reattaches to its job instead of starting a second.
    command: what every worker runs (`python -m trainer.worker URI`).
    workers: how many.
    pod: what each worker's pod gets, as the compiler wrote it for the
      Trainer step: image, resources (per worker), nodeSelector,
      tolerations, env, secretEnv, imagePullSecrets, timeoutSeconds,
      heartbeatTimeoutSeconds (TFJob workers' liveness bound, tfjob.py),
      serviceAccountName (the workers' Kubernetes account; no flag sets it
      yet); on Vertex AI machineType, project, region, serviceAccount,
      network (kubeflow/compile/train_job.py).
  """
  name: str
  command: List[str]
  workers: int
  pod: Dict = dataclasses.field(default_factory=dict)

  @property
  def timeout(self) -> Optional[float]:
    seconds = self.pod.get("timeoutSeconds")
    return float(seconds) if seconds else None


def name_for(model_run_dir: str) -> str:
  """A Kubernetes name (DNS-1035, short enough for JobSet's pod names) that
  only the Trainer's output URI decides."""
  return "train-" + hashlib.sha256(model_run_dir.rstrip("/").encode()).hexdigest()[:12]


def pod_spec(env=os.environ) -> Dict:
  """What the compiler said each worker's pod gets (empty when run locally)."""
  return json.loads(env.get(POD_ENV) or "{}")

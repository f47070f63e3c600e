"""Training Operator v1: the workers as a TFJob (`kubeflow.org/v1`).

The operator (maintained on its release-1.9 branch only) sets TF_CONFIG
itself, `<job>-worker-<i>.<namespace>.svc:2222`, but only in a container
named `tensorflow`, and not for a TFJob of one replica. Worker 0 is the
chief when there is no Chief replica (trainer/distribute.py `is_chief`).

A failed worker's container is restarted in its pod (`restartPolicy:
OnFailure`); its peers fail on the broken collective and restart too, and
all of them resume from the checkpoints under the Trainer's output. The
operator fails the TFJob once the restart counts of its Running pods sum to
`runPolicy.backoffLimit` (release-1.9 `pkg/core/job.go` PastBackoffLimit,
checked at every reconcile). One incident costs up to N restarts with N
workers: a crash, the worker and its N-1 peers; a preemption, the N-1 peers
(the worker's pod is made again, counting from 0). So the limit grows with
the workers, to survive INCIDENTS incidents whatever N is. Worker pods
carry `sidecar.istio.io/inject: "false"`: in a multi-user install's
profile namespace an Istio sidecar would outlive the worker and keep its
pod from completing (kubeflow/trainer v2.3.0 docs/legacy-v1/user-guides/
tensorflow.md line 19). KFP's `pipeline-runner` role already covers
`kubeflow.org`.

A worker that freezes (its process stopped, hung, or its node gone silent
without a reset) is not left to hang the job: its peers' collectives abort
about 10 s later (TF 2.16's coordination service heartbeat, which
MultiWorkerMirroredStrategy starts), and each worker's container has a
liveness probe that fails once its heartbeat file, touched at every step
(trainer/distribute.py `Heartbeat`), is older than `heartbeatTimeoutSeconds`
(`--train-heartbeat-timeout`, default HEARTBEAT_TIMEOUT): the kubelet kills
the frozen container and restarts it, one restart of the budget.
"""

import sys
from typing import Dict, Optional

from trainer.jobs import HEARTBEAT_ENV, kube, roles, watch
from trainer.jobs.job import Job

group, version, plural, kind = "kubeflow.org", "v1", "tfjobs", "TFJob"
INCIDENTS = 3  # crashes or preemptions a TFJob survives, whatever its workers
NO_SIDECAR = {"sidecar.istio.io/inject": "false"}
HEARTBEAT_FILE = "/tmp/trainer-heartbeat"  # in the container's own filesystem
HEARTBEAT_TIMEOUT = 300  # s without a step; a step, an eval batch, a checkpoint take less
# The kubelet probes every PERIOD s and kills after FAILURES failures in a
# row, within GRACE s: a frozen process ignores SIGTERM until SIGKILL.
PERIOD, FAILURES, GRACE = 10, 3, 10
# Exits 1 when the heartbeat file is older than the bound; passes without one
# (before the first step and during the export, trainer/distribute.py), and
# when unsure: a probe that cannot find its file must not kill a healthy worker.
PROBE = ("import os, sys, time\n"
         "try:\n  age = time.time() - os.path.getmtime(os.environ['{env}'])\n"
         "except (OSError, KeyError):\n  age = 0\n"
         "sys.exit(age > {seconds})")


def backoff_limit(workers: int) -> int:
  """The restart budget: each incident costs up to `workers` restarts, and
  the operator fails the job when the sum reaches the limit."""
  return INCIDENTS * workers + 1


def restart_bound(timeout: int = HEARTBEAT_TIMEOUT) -> int:
  """The most seconds from a worker's last step, when it froze, to the
  kubelet's kill of its container (the restart follows after back-off)."""
  return timeout + PERIOD * FAILURES + GRACE


def liveness_probe(timeout: int = HEARTBEAT_TIMEOUT) -> Dict:
  """The worker container's liveness probe: an exec of the image's python
  (no shell tools assumed), run with the container's environment."""
  body = PROBE.format(env=HEARTBEAT_ENV, seconds=int(timeout))
  return {"exec": {"command": ["python", "-c", body]}, "periodSeconds": PERIOD,
          "failureThreshold": FAILURES, "timeoutSeconds": PERIOD,
          "terminationGracePeriodSeconds": GRACE}


def check(cluster: kube.Cluster) -> None:
  """Nothing beyond the API itself, which the first call finds missing."""


def body(job: Job, namespace: str, owner: Optional[Dict]) -> Dict:
  pod = job.pod
  container = {"name": "tensorflow", "image": pod.get("image", ""), "command": job.command,
               "env": kube.env_vars(pod, [{"name": HEARTBEAT_ENV, "value": HEARTBEAT_FILE}]),
               "livenessProbe": liveness_probe(
                   pod.get("heartbeatTimeoutSeconds") or HEARTBEAT_TIMEOUT),
               "ports": [{"name": "tfjob-port", "containerPort": roles.DEFAULT_PORT}]}
  if kube.resources(pod):
    container["resources"] = kube.resources(pod)
  spec = {"containers": [container]}
  spec.update({k: pod[k] for k in ("nodeSelector", "tolerations", "serviceAccountName")
               if pod.get(k)})
  if pod.get("imagePullSecrets"):
    spec["imagePullSecrets"] = kube.pull_secrets(pod)
  metadata = {"name": job.name, "namespace": namespace,
              "labels": {"app.kubernetes.io/managed-by": "tfrecord-pipeline"}}
  if owner:
    metadata["ownerReferences"] = [owner]
  return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": metadata,
          "spec": {"runPolicy": {"backoffLimit": backoff_limit(job.workers),
                                 "cleanPodPolicy": "None"},
                   "tfReplicaSpecs": {"Worker": {
                       "replicas": job.workers, "restartPolicy": "OnFailure",
                       "template": {"metadata": {"annotations": dict(NO_SIDECAR)},
                                    "spec": spec}}}}}


def create(cluster: kube.Cluster, job: Job, made: Dict) -> Dict:
  """Creates the TFJob `made` (body's): one form for every release."""
  return kube.create(cluster, group, version, plural, made)


def verdict(obj: Dict):
  """("succeeded" | "failed" | "running", the condition's message): the
  operator's last condition that is True."""
  conditions = [c for c in obj.get("status", {}).get("conditions", [])
                if c.get("status") == "True"]
  last = conditions[-1] if conditions else {}
  if last.get("type") == "Succeeded":
    return "succeeded", last.get("message", "")
  if last.get("type") == "Failed":
    return "failed", f"{last.get('reason', '')}: {last.get('message', '')}"
  return "running", ""


def pod_selector(name: str) -> str:
  return f"training.kubeflow.org/job-name={name},training.kubeflow.org/replica-type=worker"


def index_of(pod) -> int:
  return int((pod.metadata.labels or {}).get("training.kubeflow.org/replica-index", -1))


def run(job: Job) -> None:
  watch.run(sys.modules[__name__], job)

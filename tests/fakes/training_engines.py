"""STAND-IN controllers for Kubeflow Trainer v2 (TrainJob over JobSet) and
the Training Operator v1 (TFJob), acting on kubernetes_api.py's objects.

No cluster runs here. Each pod is a local process running the container's
command with the environment its engine gives it, as the engines' source
says:
- TrainJob (kubeflow/trainer v2.2, PlainML policy): the runtime's `node`
  container with the TrainJob's image, command and `trainer.env` upserted,
  its pod's node selector, tolerations, pull secrets and service account
  the runtime's with the TrainJob's placement merged as the store's
  Trainer release does (trainjob_placement.py, 2.0 to 2.3),
  `trainer.numNodes` pods of one Indexed Job (JOB_COMPLETION_INDEX), pods
  named `<jobset>-node-0-<i>-<suffix>` with hostname `<jobset>-node-0-<i>`
  and the JobSet as subdomain. A failed pod fails its Job past the Job's
  `backoffLimit` (otherwise the pod is replaced); a failed Job restarts the
  whole JobSet while `failurePolicy.maxRestarts` allows, else fails it
  (jobset pkg/controllers/failure_policy.go: "jobset failed due to reaching
  max number of restarts (first failed job: ...)"; without a failure policy
  "jobset failed due to one or more job failures (...)"). Every Job done:
  Complete. (A TrainJob whose runtime is missing is refused at create by
  the Trainer's webhook: kubernetes_api.py.)
- TFJob (training-operator release-1.9): pods `<job>-worker-<i>`, TF_CONFIG
  set only in the container named `tensorflow` and only with more than one
  replica, addresses `<job>-worker-<i>.<namespace>.svc:<port>`. A failed
  container restarts in its pod under `OnFailure` after the kubelet's
  back-off (10 s, doubling), its pod staying Running; a pod deleted with
  its node (`preempt`) is made again, its restart count from 0. At every
  reconcile the restart counts of the Running pods are summed against
  `runPolicy.backoffLimit` (release-1.9 `pkg/core/job.go` PastBackoffLimit,
  `>=`): "Job <name> has failed because it has reached the specified
  backoff limit". Worker 0 succeeding succeeds the TFJob (no Chief replica).
  A worker container's exec liveness probe is run as the kubelet runs it
  (kubelet_probes.py): failing, the container is killed and restarted in
  its pod like a failed one, one more restart.

With `identities`, a pod's storage credentials come from its service
account alone (`spec.serviceAccountName`, `default` when none), as a
workload-identity webhook gives them (amazon-eks-pod-identity-webhook's
injected role, GKE Workload Identity's metadata server): the account's
keys are put in the pod's environment, a simplification of the token a
pod would exchange for them; the test process's AWS_* keys never reach a
pod then.

Two things differ from a cluster: names do not resolve here, so each
worker's host name is mapped to a port on 127.0.0.1 in the
TRAIN_HOST_ALIASES variable (trainer/jobs/roles.py applies it); and pods
share this machine's /tmp, so a TFJob container's variable naming a file
under /tmp names one of its pod's own instead, removed when its container
restarts (a new container's filesystem). Not modelled:
scheduling (a pod's placement is in its spec, acted on by no one), gang
scheduling, DNS, images (the command runs in this venv), resources, RBAC
beyond the API's forbidden list; for a TrainJob, a pod deleted with its
node (a crash is modelled); the TFJob's second failure check, new Failed
pods against the work queue's requeues (job.go line 191).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Dict, List, Optional

from tests.fakes import kubelet_probes, trainjob_placement
from tests.fakes.kubernetes_api import Key, Store, now

TRAINER = ("trainer.kubeflow.org/v1alpha1", "trainjobs")
TFJOB = ("kubeflow.org/v1", "tfjobs")


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def jobset_refusal(name: str, workers: int) -> str:
  """What JobSet's webhook (v0.11.1, the version Kubeflow Trainer v2.2.0
  pins; pkg/webhooks/jobset_webhook.go lines 246-267) answers the JobSet the
  Trainer builds for a TrainJob of this name: its Job's and its pods' names
  (`<jobset>-node-0`, `<jobset>-node-0-<i>-<5 letters>`, placement.go) must
  be DNS-1035 labels of at most 63 characters. "" when it is accepted. The
  Trainer only records the refusal as an Event and retries (kubeflow/trainer
  v2.2.0 pkg/controller/trainjob_controller.go lines 122-134)."""
  job, pod = f"{name}-node-0", f"{name}-node-0-{workers - 1}-abcde"
  for candidate, what in ((job, "job"), (pod, "pod")):
    if len(candidate) > 63:
      return (f'admission webhook "vjobset.kb.io" denied the request: '
              f'spec.replicatedJobs[0].name: Invalid value: "{job}": JobSet name is too '
              f'long, {what} names generated for this JobSet will exceed 63 characters')
  return ""


class Pod:
  """One pod: a process, its log file and its object in the store."""

  def __init__(self, store: Store, ns: str, name: str, labels: Dict, annotations: Dict,
               command: List[str], env: Dict[str, str], log_dir: str, owner: dict,
               container: str = "node", placement: Optional[Dict] = None,
               liveness: Optional[Dict] = None, own_files=()):
    self.store, self.key = store, ("v1", ns, "pods", name)
    # Files in the container's own filesystem: a restarted container starts
    # without them (a new writable layer).
    self.own_files = own_files
    self.command, self.env, self.restarts, self.container = command, env, 0, container
    self.log_path = os.path.join(log_dir, f"{name}.log")
    self.proc: Optional[subprocess.Popen] = None
    store.create(self.key, {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "labels": labels, "annotations": annotations, "ownerReferences": [owner]},
        "spec": {"hostname": env.get("HOSTNAME", name), **(placement or {}),
                 "containers": [{"name": container, "image": "stand-in"}]},
        "status": {"phase": "Pending"}})
    store.logs[(ns, name)] = self.log
    self.start()
    self.prober = None
    if liveness:  # the kubelet's prober (kubelet_probes.py)
      self.prober = kubelet_probes.Prober(
          liveness, env, lambda: (self.proc, self.started_at) if self.proc else None)
      self.prober.start()

  def log(self):
    """The current container's log, as the API's pods/log gives it (a
    container restarted in its pod starts a new one), and whether it ended."""
    with open(self.log_path, "rb") as f:
      f.seek(self.log_from)
      text = f.read().decode(errors="replace")
    return text, self.proc is not None and self.proc.poll() is not None

  def start(self) -> None:
    for path in self.own_files:
      if os.path.exists(path):
        os.remove(path)
    out = open(self.log_path, "a")
    self.log_from, self.started_at = out.tell(), time.time()
    # The image's python is this venv's (images are not modelled).
    command = [sys.executable if self.command[0] == "python" else self.command[0],
               *self.command[1:]]
    self.proc = subprocess.Popen(command, env=self.env, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    started = now()
    self._status("Running", {"running": {"startedAt": started}})

  def _status(self, phase: str, state: dict, last: Optional[dict] = None) -> None:
    def change(obj):
      obj["status"] = {"phase": phase, "containerStatuses": [{
          "name": self.container, "image": "stand-in", "imageID": "", "ready": phase == "Running",
          "restartCount": self.restarts, "state": state, "lastState": last or {}}]}
    self.store.update(self.key, change)

  def ended(self) -> Optional[int]:
    """The exit code once the process ended (128 + signal when killed), else None."""
    code = self.proc.poll() if self.proc else None
    if code is None:
      return None
    return 128 + -code if code < 0 else code

  def record_end(self) -> None:
    code = self.ended()
    term = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                           "finishedAt": now(), "startedAt": now()}}
    self._status("Succeeded" if code == 0 else "Failed", term)

  def crash_looping(self) -> None:
    """A container ended non-zero under OnFailure: the kubelet restarts it in
    its pod, so the pod stays Running, the container waiting in back-off."""
    code = self.ended()
    self._status("Running", {"waiting": {"reason": "CrashLoopBackOff"}},
                 {"terminated": {"exitCode": code, "reason": "Error", "finishedAt": now()}})

  def phase(self) -> str:
    obj = self.store.get(self.key)
    return obj["status"]["phase"] if obj else ""

  def restart_in_place(self) -> None:
    """The kubelet's restart of a failed container under OnFailure."""
    code = self.ended()
    self.restarts += 1
    self._status("Running", {"waiting": {"reason": "CrashLoopBackOff"}},
                 {"terminated": {"exitCode": code, "reason": "Error", "finishedAt": now()}})
    self.start()

  def kill(self) -> None:
    if getattr(self, "prober", None):
      self.prober.stopped.set()
    if self.proc and self.proc.poll() is None:
      os.killpg(self.proc.pid, signal.SIGKILL)
      self.proc.wait()


class Controllers(threading.Thread):
  """Reconciles TrainJobs and TFJobs every 0.2 s until stopped."""

  def __init__(self, store: Store, log_dir: str, base_env: Dict[str, str],
               backoff_period: float = 10.0,
               identities: Optional[Dict[str, Dict[str, str]]] = None):
    super().__init__(daemon=True)
    self.store, self.log_dir, self.base_env = store, log_dir, base_env
    # service account -> the storage credentials its pods get (module doc).
    self.identities = identities
    if identities is not None:
      self.base_env = {k: v for k, v in base_env.items() if not k.startswith("AWS_")}
    # The kubelet's container restart back-off: `backOffPeriod` (10 s),
    # doubling to `MaxContainerBackOff` (300 s), kubernetes
    # pkg/kubelet/kubelet.go. A test that counts restarts, not seconds, may
    # shorten the period; the doubling and the cap stay.
    self.backoff_period = backoff_period
    self.jobs: Dict[Key, dict] = {}  # job key -> {"pods": [Pod], "restarts": n, ...}
    self.started_pods: List[str] = []  # every pod ever started, by name
    self.placed: Dict[str, Dict] = {}  # pod name -> its placement (trainjob_placement.py)
    self._stop = threading.Event()
    store.on_delete.append(self._deleted)

  def stop(self) -> None:
    self._stop.set()
    for state in list(self.jobs.values()):
      for pod in state["pods"]:
        pod.kill()

  def run(self) -> None:
    while not self._stop.is_set():
      for plural, step in ((TRAINER, self._trainjob), (TFJOB, self._tfjob)):
        for key, obj in [(k, o) for k, o in list(self.store.objects.items())
                         if (k[0], k[2]) == plural]:
          try:
            step(key, obj)
          except Exception as e:  # noqa: BLE001  (a controller logs and retries, as real ones do)
            print(f"stand-in controller: {key}: {e!r}", flush=True)
      self._stop.wait(0.2)

  def _deleted(self, key: Key, obj: dict) -> None:
    state = self.jobs.pop(key, None)
    for pod in state["pods"] if state else []:
      pod.kill()

  # The pods' environment: this venv's, the container's, the engine's.
  def _env(self, container: dict, extra: Dict[str, str], account: str = "") -> Dict[str, str]:
    env = dict(self.base_env)
    if self.identities is not None:
      env.update(self.identities.get(account or "default", {}))
    for var in container.get("env", []):
      if "value" in var:
        env[var["name"]] = var["value"]
      elif "secretKeyRef" in var.get("valueFrom", {}):  # the kubelet reads the secret
        ref = var["valueFrom"]["secretKeyRef"]
        env[var["name"]] = self.store.secrets[ref["name"]][ref["key"]]
    env.update(extra)
    return env

  def _condition(self, key: Key, kind: str, reason: str, message: str) -> None:
    def change(obj):
      conditions = obj.setdefault("status", {}).setdefault("conditions", [])
      conditions.append({"type": kind, "status": "True", "reason": reason,
                         "message": message, "lastTransitionTime": now()})
    self.store.update(key, change)

  # -- TrainJob over JobSet ------------------------------------------------
  def _trainjob(self, key: Key, obj: dict) -> None:
    state = self.jobs.get(key)
    if state is None:
      runtime = self.store.get(("trainer.kubeflow.org/v1alpha1", key[1], "trainingruntimes",
                                obj["spec"]["runtimeRef"]["name"]))
      if runtime is None:
        return  # the Trainer's reconcile fails on the lookup; no condition
      state = self.jobs[key] = {"restarts": 0, "runtime": runtime, "pods": [],
                                "failures": 0, "done": False}
      refused = jobset_refusal(key[3], self._workers(obj, state))
      if refused:  # no JobSet, no pods, no condition: an Event, and the job waits
        state["done"] = True
        self.store.create(("v1", key[1], "events", f"{key[3]}.{uuid.uuid4().hex[:8]}"), {
            "involvedObject": {"kind": "TrainJob", "name": key[3]}, "type": "Warning",
            "reason": "TrainJobResourcesCreationFailed",
            "message": f"TrainJob resources reconciliation failed: {refused}"})
        return
      self._jobset_start(key, obj, state)
      return
    if state["done"]:
      return
    codes = [pod.ended() for pod in state["pods"]]
    for pod, code in zip(state["pods"], codes):
      if code is not None and pod.store.get(pod.key)["status"]["phase"] == "Running":
        pod.record_end()
    if all(code == 0 for code in codes):
      state["done"] = True
      return self._condition(key, "Complete", "AllJobsCompleted", "jobset completed successfully")
    failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
    if not failed:
      return
    template = self._node_job(state["runtime"])
    backoff = template["spec"].get("backoffLimit", 6)  # Kubernetes Jobs' default
    state["failures"] += len(failed)
    if state["failures"] <= backoff:  # the Job controller replaces the failed pods
      for i in failed:
        state["pods"][i] = self._trainjob_pod(key, obj, state, i)
      return
    # The Job failed: the Job controller deletes its active pods, and the
    # JobSet decides.
    for pod in state["pods"]:
      if pod.ended() is None:
        pod.kill()
        self.store.delete(pod.key)
      elif pod.store.get(pod.key)["status"]["phase"] == "Running":
        pod.record_end()
    job_name = f"{key[3]}-node-0"
    policy = state["runtime"]["spec"]["template"]["spec"].get("failurePolicy")
    if policy is None:
      state["done"] = True
      return self._condition(key, "Failed", "FailedJobs", "jobset failed due to one or more "
                             f"job failures (first failed job: {job_name})")
    if state["restarts"] >= policy.get("maxRestarts", 0):
      state["done"] = True
      return self._condition(key, "Failed", "ReachedMaxRestarts", "jobset failed due to "
                             f"reaching max number of restarts (first failed job: {job_name})")
    state["restarts"] += 1
    for pod in state["pods"]:
      if self.store.get(pod.key):
        self.store.delete(pod.key)
    self._jobset_start(key, obj, state)

  @staticmethod
  def _node_job(runtime: dict) -> dict:
    (job,) = [j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]
              if j["name"] == "node"]
    return job["template"]

  @staticmethod
  def _workers(obj: dict, state: dict) -> int:
    return obj["spec"]["trainer"].get("numNodes") or \
        state["runtime"]["spec"].get("mlPolicy", {}).get("numNodes", 1)

  def _jobset_start(self, key: Key, obj: dict, state: dict) -> None:
    workers = self._workers(obj, state)
    state["failures"] = 0
    state["ports"] = {f"{key[3]}-node-0-{i}.{key[3]}": f"127.0.0.1:{free_port()}"
                      for i in range(workers)}
    state["pods"] = [self._trainjob_pod(key, obj, state, i) for i in range(workers)]

  def _trainjob_pod(self, key: Key, obj: dict, state: dict, index: int) -> Pod:
    (container,) = [c for c in self._node_job(state["runtime"])["spec"]["template"]["spec"]
                    ["containers"] if c["name"] == "node"]
    trainer = obj["spec"]["trainer"]
    merged = {**container, "env": container.get("env", []) + trainer.get("env", [])}
    command = trainer.get("command") or container.get("command")
    name = f"{key[3]}-node-0-{index}-{uuid.uuid4().hex[:5]}"
    template = self._node_job(state["runtime"])["spec"]["template"]
    placed = self.placed[name] = trainjob_placement.placed(
        obj, template["spec"], "node", self.store.trainer_version)
    env = self._env(merged, {"JOB_COMPLETION_INDEX": str(index),
                             "HOSTNAME": f"{key[3]}-node-0-{index}",
                             "TRAIN_HOST_ALIASES": json.dumps(state["ports"])},
                    placed.get("serviceAccountName", ""))
    self.started_pods.append(name)
    marks = {"jobset.sigs.k8s.io/jobset-name": key[3],
             "jobset.sigs.k8s.io/restart-attempt": str(state["restarts"]),
             "batch.kubernetes.io/job-completion-index": str(index)}
    annotations = {**template.get("metadata", {}).get("annotations", {}), **marks}
    return Pod(self.store, key[1], name, marks, annotations, command, env, self.log_dir,
               {"apiVersion": "batch/v1", "kind": "Job", "name": f"{key[3]}-node-0",
                "uid": obj["metadata"]["uid"]}, placement=placed)

  # -- TFJob ---------------------------------------------------------------
  def preempt(self, pod: Pod) -> None:
    """A node's preemption: the pod and its process go, as a node's
    deletion takes them (its controller makes a new one)."""
    pod.kill()
    self.store.delete(pod.key)

  def _tfjob(self, key: Key, obj: dict) -> None:
    state = self.jobs.get(key)
    spec = obj["spec"]["tfReplicaSpecs"]["Worker"]
    if state is None:
      state = self.jobs[key] = {"pods": [], "done": False, "retry_at": {}}
      self._condition(key, "Created", "TFJobCreated",
                      f"TFJob {key[3]} is created.")
      replicas = spec.get("replicas", 1)
      port = next((p["containerPort"] for c in spec["template"]["spec"]["containers"]
                   for p in c.get("ports", []) if p.get("name") == "tfjob-port"), 2222)
      state["hosts"] = [f"{key[3]}-worker-{i}.{key[1]}.svc:{port}" for i in range(replicas)]
      state["aliases"] = {h.rsplit(":", 1)[0]: f"127.0.0.1:{free_port()}"
                          for h in state["hosts"]}
      for i in range(replicas):
        state["pods"].append(self._tfjob_pod(key, obj, i, state["hosts"], state["aliases"]))
      self._condition(key, "Running", "TFJobRunning", f"TFJob {key[1]}/{key[3]} is running.")
      return
    if state["done"]:
      return
    pods = state["pods"]
    # A pod that is gone (deleted with its node) is made again, its
    # container's restart count starting at 0 (training-operator release-1.9
    # pkg/controller.v1/common/pod.go ReconcilePods: a missing index is
    # created; lines 350-366: a Failed pod is deleted to be made again).
    for i, pod in enumerate(pods):
      if self.store.get(pod.key) is None and key in self.jobs:
        pod.kill()
        state["retry_at"].pop(i, None)
        pods[i] = self._tfjob_pod(key, obj, i, state["hosts"], state["aliases"])
    if pods[0].ended() == 0:  # worker 0 is the chief without a Chief replica
      for pod in pods:
        if pod.ended() is not None:
          pod.record_end()
      state["done"] = True
      return self._condition(key, "Succeeded", "TFJobSucceeded",
                             f"TFJob {key[1]}/{key[3]} successfully completed.")
    policy = spec.get("restartPolicy", "Never")
    limit = obj["spec"].get("runPolicy", {}).get("backoffLimit")
    # At every reconcile (pkg/controller.v1/common/job.go lines 185-200),
    # PastBackoffLimit (pkg/core/job.go lines 95-133): the restart counts of
    # the containers of the pods that are Running, summed over all workers,
    # against the limit (`>=`; any restart for a limit of 0).
    if limit is not None and policy in ("OnFailure", "Always", "ExitCode"):
      restarts = sum(p.restarts for p in pods if p.phase() == "Running")
      if (restarts > 0) if limit == 0 else (restarts >= limit):
        # job.go lines 206-247: DeletePodsAndServices comes before the
        # Failed condition, whatever cleanPodPolicy says (its `None` only
        # spares a job already finished).
        return self._fail(key, state, f"Job {key[3]} has failed because it has reached "
                                      f"the specified backoff limit", delete_pods=True)
    for i, pod in enumerate(pods):
      code = pod.ended()
      if code in (None, 0) or i in state["retry_at"]:
        continue
      retryable = policy in ("OnFailure", "Always") or (policy == "ExitCode" and code > 127)
      if not retryable:
        pod.record_end()
        # pod.go lines 367-372: the pods stay (cleanPodPolicy None).
        return self._fail(key, state, f'job "{key[3]}" is failing because "Worker" '
                                      f'replica(s) failed.')
      # Restarted in its pod by the kubelet: the operator sets no condition
      # (its Restarting condition is for Failed pods, pod.go line 362).
      pod.crash_looping()
      state["retry_at"][i] = time.monotonic() + min(
          self.backoff_period * 2 ** pod.restarts, 30 * self.backoff_period)
    for i, at in list(state["retry_at"].items()):
      if time.monotonic() >= at:
        del state["retry_at"][i]
        pods[i].restart_in_place()

  def _fail(self, key: Key, state: dict, message: str, delete_pods: bool = False) -> None:
    """The TFJob failed: its workers stop, and past the backoff limit their
    pods are deleted first (else kept, under `cleanPodPolicy: None`, until
    the launcher deletes the job)."""
    for pod in state["pods"]:
      pod.kill()
      if delete_pods and self.store.get(pod.key):
        self.store.delete(pod.key)
    state["done"] = True
    self._condition(key, "Failed", "TFJobFailed", message)

  def _tfjob_pod(self, key: Key, obj: dict, index: int, hosts: List[str],
                 aliases: Dict[str, str]) -> Pod:
    spec = obj["spec"]["tfReplicaSpecs"]["Worker"]
    (container,) = spec["template"]["spec"]["containers"][:1]
    extra = {"HOSTNAME": f"{key[3]}-worker-{index}", "TRAIN_HOST_ALIASES": json.dumps(aliases)}
    # A path in the container's own /tmp is a file of its own here.
    own = {v["name"]: os.path.join(self.log_dir, f"{key[3]}-worker-{index}.{v['name']}")
           for v in container.get("env", []) if v.get("value", "").startswith("/tmp/")}
    extra.update(own)
    if container["name"] == "tensorflow" and len(hosts) > 1:
      extra["TF_CONFIG"] = json.dumps({"cluster": {"worker": hosts},
                                       "task": {"type": "worker", "index": index},
                                       "environment": "cloud"})
    name = f"{key[3]}-worker-{index}"
    self.started_pods.append(name)
    labels = {"training.kubeflow.org/job-name": key[3],
              "training.kubeflow.org/replica-type": "worker",
              "training.kubeflow.org/replica-index": str(index)}
    annotations = spec["template"].get("metadata", {}).get("annotations", {})
    account = spec["template"]["spec"].get("serviceAccountName", "")
    return Pod(self.store, key[1], name, labels, dict(annotations), container["command"],
               self._env(container, extra, account), self.log_dir,
               {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": key[3],
                "uid": obj["metadata"]["uid"]}, container["name"],
               liveness=container.get("livenessProbe"), own_files=list(own.values()))

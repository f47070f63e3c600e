"""Running one job on a Kubernetes engine: create or reattach, relay, wait, delete.

The engine modules (trainjob.py, tfjob.py) say what their objects look like,
how they are created and what their conditions mean; this is what they
share:

1. create the job under its name; if it exists (a retried step: Argo starts
   a new pod with the same executor input), reattach to it instead;
2. relay the chief's pod log into the step's log, following it to the new
   pod when the engine restarts the job, or to its new container when the
   engine restarts it in its pod;
3. watch the job's conditions until it succeeds, fails for good or runs
   past the timeout; a failure names the worker, how it ended and its last
   lines, from the pods;
4. delete the job once it ended, so nothing is left running or held.
"""

import logging
import threading
import time
from typing import List, Optional, Tuple

from trainer.jobs import kube
from trainer.jobs.job import ClusterError, Job, JobFailed

log = logging.getLogger("absl")  # the step's log on Kubeflow
WATCH_SECONDS = 30  # one watch request; then it is made again


def run(engine, job: Job, cluster: Optional[kube.Cluster] = None) -> None:
  cluster = cluster or kube.Cluster()
  engine.check(cluster)
  pod = kube.step_pod(cluster)
  job = kube.with_identity(job, pod)
  body = engine.body(job, cluster.namespace, kube.owner(pod))
  obj = _create_or_attach(engine, cluster, job, body)
  relay = Relay(engine, cluster, job.name)
  relay.start()
  try:
    _wait(engine, cluster, job, obj)
  finally:
    relay.stop()
  _delete(engine, cluster, job.name)


def _api(engine, cluster: kube.Cluster, verb: str, name: str, fn, *args, **kwargs):
  return cluster.call(f"{verb} {engine.plural}.{engine.group} {name}", fn, engine.group,
                      engine.version, cluster.namespace, engine.plural, *args, **kwargs)


def _create_or_attach(engine, cluster: kube.Cluster, job: Job, body: dict) -> dict:
  found = _api(engine, cluster, "get", job.name, cluster.custom.get_namespaced_custom_object,
               job.name, missing_ok=True)
  if found is not None:
    log.info("training job %s: reattached to the %s created %s (a retried step)",
             job.name, engine.kind, found["metadata"].get("creationTimestamp", "earlier"))
    return found
  created = engine.create(cluster, job, body)
  log.info("training job %s: %s created in namespace %s", job.name, engine.kind,
           cluster.namespace)
  return created


def suspended(obj: dict) -> Optional[str]:
  """Why the job is held, when it is: a queue (Kueue) creates TrainJobs and
  TFJobs suspended and resumes them once it admits them; both engines then
  show a `Suspended` condition. None when it is not held."""
  for cond in obj.get("status", {}).get("conditions", []):
    if cond.get("type") == "Suspended" and cond.get("status") == "True":
      return ": ".join(filter(None, (cond.get("reason"), cond.get("message")))) or "suspended"
  if obj.get("spec", {}).get("suspend") or obj.get("spec", {}).get("runPolicy", {}).get(
      "suspend"):
    return "spec.suspend is true"
  return None


class Held:
  """Says in the step's log when the job is held and when it is let go,
  once each time: the step keeps waiting meanwhile."""

  def __init__(self, name: str):
    self.name, self.why = name, None

  def see(self, obj: dict) -> None:
    why = suspended(obj)
    if why == self.why:
      return
    if why:
      log.info("training job %s: Suspended (%s); waiting for it to be admitted",
               self.name, why)
    else:
      log.info("training job %s: resumed", self.name)
    self.why = why


def _wait(engine, cluster: kube.Cluster, job: Job, obj: dict) -> None:
  from kubernetes import watch
  deadline = time.monotonic() + job.timeout if job.timeout else None
  held = Held(job.name)
  while True:
    held.see(obj)
    state, message = engine.verdict(obj)
    if state == "succeeded":
      return
    if state == "failed":  # read its pods before they go with it
      why = failed_worker(engine, cluster, job.name) or message
      _delete(engine, cluster, job.name)
      raise JobFailed(f"training job {job.name}: {engine.kind} failed: {why}")
    if deadline and time.monotonic() > deadline:
      _delete(engine, cluster, job.name)
      raise JobFailed(f"training job {job.name}: not finished after {job.timeout:.0f} s "
                      f"(its timeout); deleted")
    left = int(deadline - time.monotonic()) + 1 if deadline else WATCH_SECONDS
    obj = _next_event(engine, cluster, job.name, obj, watch.Watch(),
                      min(WATCH_SECONDS, max(1, left))) or obj


def _next_event(engine, cluster, name: str, obj: dict, watcher, seconds: int) -> Optional[dict]:
  """The job as it is after its next change, or None after `seconds`."""
  version = obj["metadata"].get("resourceVersion")
  stream = watcher.stream(cluster.custom.list_namespaced_custom_object, engine.group,
                          engine.version, cluster.namespace, engine.plural,
                          field_selector=f"metadata.name={name}", resource_version=version,
                          timeout_seconds=seconds)
  try:
    for event in stream:
      if event["type"] == "DELETED":
        raise JobFailed(f"training job {name}: the {engine.kind} was deleted by someone "
                        f"else while it ran")
      return event["object"]
  except ClusterError:
    raise
  except Exception as e:  # noqa: BLE001  (a watch ends for many reasons, 410 Gone, a reset: ask again)
    from kubernetes.client.exceptions import ApiException
    if isinstance(e, ApiException) and e.status in (401, 403):
      raise ClusterError(kube.explain(f"watch {engine.plural}.{engine.group}",
                                      cluster.namespace, e.status, e.reason, e.body)) from None
    log.info("training job %s: watch ended (%s); reading the job again", name, e)
  finally:
    watcher.stop()
  return _api(engine, cluster, "get", name, cluster.custom.get_namespaced_custom_object, name)


def _delete(engine, cluster: kube.Cluster, name: str) -> None:
  """Deletes the job; its pods go with it (background propagation)."""
  cluster.call(f"delete {engine.plural}.{engine.group} {name}",
               cluster.custom.delete_namespaced_custom_object, engine.group, engine.version,
               cluster.namespace, engine.plural, name, propagation_policy="Background",
               missing_ok=True)


def pods(engine, cluster: kube.Cluster, name: str) -> List:
  """The job's pods, oldest first."""
  found = cluster.call(f"list pods of {name}", cluster.core.list_namespaced_pod,
                       cluster.namespace, label_selector=engine.pod_selector(name)).items
  return sorted(found, key=lambda p: p.metadata.creation_timestamp.timestamp()
                if p.metadata.creation_timestamp else 0.0)


def chief_pod(engine, cluster: kube.Cluster, name: str) -> Optional[Tuple[str, int]]:
  """The newest pod of worker 0 that has started, by name, with its
  container's restarts: a TFJob restarts a container in its pod, and each
  restart is a new log to follow."""
  started = [p for p in pods(engine, cluster, name)
             if engine.index_of(p) == 0 and p.status.phase != "Pending"]
  if not started:
    return None
  restarts = sum(s.restart_count or 0 for s in started[-1].status.container_statuses or [])
  return started[-1].metadata.name, restarts


def failed_worker(engine, cluster: kube.Cluster, name: str) -> str:
  """`worker 1 (pod P) exited with 137 (OOMKilled): <its last line>` for
  the worker that failed first, or "" when no pod says."""
  ended = []
  for pod in pods(engine, cluster, name):
    for status in pod.status.container_statuses or []:
      term = (status.state and status.state.terminated) or (
          status.last_state and status.last_state.terminated)
      if term and term.exit_code:
        at = term.finished_at.timestamp() if term.finished_at else float("inf")
        ended.append((at, pod, term))
  if not ended:
    return ""
  # Its peers fail after it, on the broken collective (exit 1); within the
  # same second, the one that was killed (exit 128 + signal) came first.
  _, pod, term = min(ended, key=lambda e: (e[0], e[2].exit_code < 128))
  try:
    lines = cluster.core.read_namespaced_pod_log(pod.metadata.name, cluster.namespace,
                                                 tail_lines=5).splitlines()
  except Exception:  # noqa: BLE001  (its log may have gone with it; the exit code says enough)
    lines = []
  last = next((line for line in reversed(lines) if line.strip()), term.message or "")
  return (f"worker {engine.index_of(pod)} (pod {pod.metadata.name}) exited with "
          f"{term.exit_code} ({term.reason or 'Error'})" + (f": {last}" if last else ""))


class Relay(threading.Thread):
  """Follows the chief's pod log into the step's log, pod after pod."""

  def __init__(self, engine, cluster: kube.Cluster, name: str):
    super().__init__(daemon=True)
    self.engine, self.cluster, self.name = engine, cluster, name
    self._stopped = threading.Event()

  def stop(self) -> None:
    self._stopped.set()

  def run(self) -> None:
    followed = set()
    while not self._stopped.is_set():
      try:
        pod = chief_pod(self.engine, self.cluster, self.name)
      except Exception as e:  # noqa: BLE001  (the job's outcome does not depend on its log)
        log.info("training job %s: cannot list its pods: %s", self.name, e)
        pod = None
      if pod is None or pod in followed:
        self._stopped.wait(2)
        continue
      followed.add(pod)
      pod = pod[0]
      try:
        stream = self.cluster.core.read_namespaced_pod_log(
            pod, self.cluster.namespace, follow=True, _preload_content=False)
        for raw in stream.stream():
          for line in raw.decode(errors="replace").splitlines():
            log.info("[%s] %s", pod, line)
          if self._stopped.is_set():
            return
      except Exception as e:  # noqa: BLE001  (the pod went before its log was read)
        log.info("training job %s: log of %s ended: %s", self.name, pod, e)

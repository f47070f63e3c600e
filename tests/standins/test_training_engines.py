"""The stand-in training engines (tests/fakes/training_engines.py) count and
refuse as upstream does: a TFJob's restart budget (trainer/jobs/tfjob.py)
against the Training Operator's own accounting, as the stand-in controller
does it
(tests/fakes/training_engines.py, from release-1.9 `pkg/core/job.go`
PastBackoffLimit): the restart counts of the Running pods, summed over the
workers, at every reconcile.

The workers here are processes that wait for a file, not TensorFlow: what
is judged is the counting. A crash is a worker killed in its pod (the
kubelet restarts it, after its back-off); a preemption deletes the pod with
its node (the operator makes it again, its count from 0). Either way the
other workers fail on the broken collective and restart in their pods, as
MultiWorkerMirroredStrategy's do; here the test kills them so.
The same with real TensorFlow workers that resume from their checkpoint:
tests/e2e/test_train_workers.py.
"""

import os
import signal
import sys
import time

import pytest

from tests.fakes import kubernetes_api, training_engines
from trainer.jobs import tfjob
from trainer.jobs.job import Job

NAMESPACE = "team-a"


def wait_for(what: str, ready, seconds: float = 300):
  deadline = time.monotonic() + seconds
  while time.monotonic() < deadline:
    if ready():
      return
    time.sleep(0.2)
  raise AssertionError(f"expected {what} within {seconds:.0f} s; it did not happen")



def start(store, controllers, tmp_path, workers: int):
  """A TFJob as the launcher writes it, of workers that end (0) once
  `done` exists; its key, and the job's state in the controller."""
  done = tmp_path / "done"
  command = [sys.executable, "-c", "import os, time\nwhile not os.path.exists(%r): "
             "time.sleep(0.2)" % str(done)]
  body = tfjob.body(Job("train-budget", command, workers, {"image": "i"}), NAMESPACE, None)
  key = ("kubeflow.org/v1", NAMESPACE, "tfjobs", "train-budget")
  store.create(key, body)
  wait_for("the workers", lambda: key in controllers.jobs
           and len(controllers.jobs[key]["pods"]) == workers)
  return key, controllers.jobs[key], done


def all_running(state) -> bool:
  return not state["retry_at"] and all(
      p.ended() is None and p.phase() == "Running" for p in state["pods"])


def incident(controllers, state, index: int, kind: str) -> None:
  """Worker `index` crashes or is preempted; its peers fail and restart."""
  pods = state["pods"]
  if kind == "preemption":
    controllers.preempt(pods[index])
  for i, pod in enumerate(pods):
    if kind == "crash" or i != index:
      os.killpg(pod.proc.pid, signal.SIGKILL)
      pod.proc.wait()  # dead before anyone looks: a signal is not delivered at once
  wait_for("every worker running again", lambda: all_running(state), 600)


def conditions(store, key):
  return [(c["type"], c["message"]) for c in store.get(key)["status"]["conditions"]]


def test_four_workers_survive_two_preemptions_and_a_crash_and_fail_past_their_budget(engine):
  """Issue 53: with a budget of 3 restarts, 4 workers failed at their first
  preemption (3 restarts). Now the budget scales with the workers."""
  store, controllers, tmp_path = engine
  key, state, done = start(store, controllers, tmp_path, 4)
  assert store.get(key)["spec"]["runPolicy"]["backoffLimit"] == tfjob.backoff_limit(4) == 13
  incident(controllers, state, 2, "preemption")
  incident(controllers, state, 1, "preemption")
  incident(controllers, state, 3, "crash")
  # 3 + 3 + 4 restarts, less worker 1's first, which its pod took with it
  # when it was preempted: 9 among the Running pods, under 13.
  assert [p.restarts for p in state["pods"]] == [3, 1, 2, 3], [p.restarts for p in
                                                                state["pods"]]
  assert not state["done"], conditions(store, key)
  assert "Failed" not in [kind for kind, _ in conditions(store, key)]
  # A fourth incident spends the budget: the operator fails the job once the
  # restarted workers run again (its check at every reconcile), naming it.
  pods = state["pods"]
  for pod in pods:
    os.killpg(pod.proc.pid, signal.SIGKILL)
    pod.proc.wait()
  wait_for("the job to fail", lambda: state["done"], 600)
  assert conditions(store, key)[-1] == (
      "Failed", "Job train-budget has failed because it has reached the specified "
                "backoff limit"), conditions(store, key)


def test_a_job_within_its_budget_succeeds_when_worker_0_does(engine):
  store, controllers, tmp_path = engine
  key, state, done = start(store, controllers, tmp_path, 3)
  incident(controllers, state, 1, "preemption")
  done.write_text("")
  wait_for("the job to succeed", lambda: state["done"], 120)
  assert conditions(store, key)[-1][0] == "Succeeded", conditions(store, key)
  annotations = [store.get(p.key)["metadata"]["annotations"] for p in state["pods"]]
  assert annotations == [{"sidecar.istio.io/inject": "false"}] * 3, annotations


def test_a_trainjob_whose_jobset_names_are_too_long_never_starts_and_says_so_in_an_event(
    tmp_path):
  """JobSet's webhook refuses the JobSet the Trainer builds when its pods'
  names would pass 63 characters: a TrainJob named with 49 characters and 4
  workers. The TrainJob itself is accepted (its own rule is 63); the Trainer
  records an Event and starts nothing. The launcher's names (trainer/jobs/job.py,
  `train-` and 12 hex digits) are far inside."""
  import yaml

  from tests.fakes.standin_cluster import REPO
  from trainer.jobs import trainjob
  from trainer.jobs.job import name_for as job_name
  store = kubernetes_api.Store({"trainjobs", "trainingruntimes", "events"})
  with open(os.path.join(REPO, "kubeflow", "manifests", "trainingruntime.yaml")) as f:
    store.create(("trainer.kubeflow.org/v1alpha1", NAMESPACE, "trainingruntimes",
                  trainjob.RUNTIME), yaml.safe_load(f))
  # Restarts are counted here, not timed: a 1 s back-off (the kubelet's is
  # 10 s), so the four incidents take seconds, not minutes.
  controllers = training_engines.Controllers(store, str(tmp_path), dict(os.environ),
                                             backoff_period=1.0)
  controllers.start()
  try:
    for name in ("t" * 49, job_name("s3://b/root/Trainer/model_run/7")):
      body = trainjob.body(Job(name, [sys.executable, "-c", "pass"], 4, {"image": "i"}),
                           NAMESPACE, None)
      store.create(("trainer.kubeflow.org/v1alpha1", NAMESPACE, "trainjobs", name), body)
    keys = [("trainer.kubeflow.org/v1alpha1", NAMESPACE, "trainjobs", n)
            for n in ("t" * 49, job_name("s3://b/root/Trainer/model_run/7"))]
    wait_for("both jobs reconciled", lambda: all(k in controllers.jobs for k in keys)
             and len(controllers.jobs[keys[1]]["pods"]) == 4)
    long_one, ours = (controllers.jobs[k] for k in keys)
    assert long_one["pods"] == [] and len(ours["pods"]) == 4
    (event,) = store.list("v1", NAMESPACE, "events")
    assert event["reason"] == "TrainJobResourcesCreationFailed"
    assert event["message"] == (
        'TrainJob resources reconciliation failed: admission webhook "vjobset.kb.io" denied '
        f'the request: spec.replicatedJobs[0].name: Invalid value: "{"t" * 49}-node-0": '
        'JobSet name is too long, pod names generated for this JobSet will exceed 63 '
        'characters'), event["message"]
  finally:
    controllers.stop()


RUNTIME_PLACED = {"nodeSelector": {"zone": "a"},
                  "tolerations": [{"key": "spot", "operator": "Exists"}]}
PLACING = {"image": "i", "nodeSelector": {"pool": "gpu"}, "serviceAccountName": "trainer",
           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                            "effect": "NoSchedule"}]}


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.3"])
def test_a_placed_trainjob_runs_its_workers_where_it_said_on_each_trainer(
    tmp_path, monkeypatch, version):
  """Issue 70: the launcher's TrainJob with a node selector, a toleration
  and a service account, end to end through the stand-in API and Trainer
  of each release: created in that release's form, its workers' pods carry
  the placement merged into the runtime's as the Trainer merges it
  (tests/fakes/trainjob_placement.py: the map merged, the tolerations
  replaced), and the job succeeds. The same with TensorFlow workers on a
  compiled pipeline: tests/e2e/test_kubeflow_matrix.py (Trainer 2.1) and
  tests/e2e/test_train_workers.py (2.3)."""
  import yaml

  from tests.fakes.standin_cluster import REPO
  from trainer.jobs import trainjob, watch
  store = kubernetes_api.Store({"trainjobs", "trainingruntimes"}, trainer_version=version)
  with open(os.path.join(REPO, "kubeflow", "manifests", "trainingruntime.yaml")) as f:
    runtime = yaml.safe_load(f)
  (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
  node["template"]["spec"]["template"]["spec"].update(RUNTIME_PLACED)
  store.create(("trainer.kubeflow.org/v1alpha1", NAMESPACE, "trainingruntimes",
                trainjob.RUNTIME), runtime)
  server = kubernetes_api.serve(store)
  (tmp_path / "kubeconfig").write_text(kubernetes_api.kubeconfig(server, NAMESPACE))
  monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
  # The stand-in's watch stream reaches the client whole, at its timeout:
  # a short one, so the finished job is seen in seconds.
  monkeypatch.setattr(watch, "WATCH_SECONDS", 2)
  controllers = training_engines.Controllers(store, str(tmp_path), dict(os.environ))
  controllers.start()
  try:
    trainjob.run(Job("train-placed", [sys.executable, "-c", "pass"], 2, PLACING))
  finally:
    controllers.stop()
    server.shutdown()
  assert len(controllers.placed) == 2, controllers.placed
  for name, placed in controllers.placed.items():
    assert placed == {"nodeSelector": {"zone": "a", "pool": "gpu"},
                      "tolerations": PLACING["tolerations"],
                      "serviceAccountName": "trainer"}, (name, placed)
  assert store.created["trainjobs"] == ["train-placed"]

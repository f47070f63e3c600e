"""trainer/jobs/kube.py: what the launcher takes from its own pod for the
job: the Argo Workflow that owns it, and the service account its workers
run as. The pods are the kubernetes client's objects, as the API returns
them; the calls themselves against the stand-in API are in
tests/e2e/test_train_workers.py."""

from kubernetes import client

from trainer.jobs import kube
from trainer.jobs.job import Job


def step_pod(account="default-editor", owners=("Workflow",)) -> client.V1Pod:
  refs = [client.V1OwnerReference(api_version="argoproj.io/v1alpha1", kind=kind,
                                  name="digits-run-1", uid="u-1") for kind in owners]
  return client.V1Pod(metadata=client.V1ObjectMeta(name="step", owner_references=refs),
                      spec=client.V1PodSpec(containers=[], service_account_name=account))


JOB = Job("train-abc", ["python", "-m", "trainer.worker", "s3://b/inputs.json"], 2,
          {"image": "i"})


def test_workers_run_as_the_steps_own_account():
  """Issue 70: the step wrote the job's inputs as default-editor (Workload
  Identity, an IAM role on the profile's account); workers left to the
  namespace's `default` got 403 reading them."""
  assert kube.with_identity(JOB, step_pod()).pod == {"image": "i",
                                                     "serviceAccountName": "default-editor"}


def test_the_compiled_account_wins_over_the_steps():
  named = Job(JOB.name, JOB.command, 2, {"image": "i", "serviceAccountName": "trainer-reader"})
  assert kube.with_identity(named, step_pod()).pod["serviceAccountName"] == "trainer-reader"


def test_outside_a_pod_or_without_an_account_the_job_is_as_compiled():
  assert kube.with_identity(JOB, None) is JOB
  assert kube.with_identity(JOB, step_pod(account=None)) is JOB


def test_the_job_is_owned_by_the_runs_workflow_not_the_step_pod():
  assert kube.owner(step_pod()) == {
      "apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "name": "digits-run-1",
      "uid": "u-1", "blockOwnerDeletion": False}
  assert kube.owner(step_pod(owners=("ReplicaSet",))) is None
  assert kube.owner(None) is None


def test_each_variable_and_pull_secret_reaches_the_workers_once_the_launchers_last():
  """Both engines' CRDs key these lists by name: a name given twice (an
  --env and a --secret-env, or a user's TRAIN_WORKERS beside the
  launcher's) is refused by the API server as a duplicate."""
  pod = {"env": {"X": "plain", "TRAIN_WORKERS": "9"}, "secretEnv": [["s3", "key", "X"]],
         "imagePullSecrets": ["regcred", "regcred", "other"]}
  env = kube.env_vars(pod, [{"name": "TRAIN_WORKERS", "value": "2"}])
  assert [v["name"] for v in env] == ["TRAIN_WORKERS", "X"]
  assert env == [{"name": "TRAIN_WORKERS", "value": "2"},
                 {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "key"}}}]
  assert kube.pull_secrets(pod) == [{"name": "regcred"}, {"name": "other"}]

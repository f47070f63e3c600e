"""trainer/jobs/kube.py on the stand-in cluster (tests/fakes/standin_cluster.py)
whose pods reach storage as their service account, as GKE Workload Identity
or an IAM role on a profile's account gives it, in front of the profile
policy's S3 (tests/fakes/s3_profiles.py): the Trainer step's workers read
what the step wrote because they run as the step's account. The workers
here read one object with boto3, not TensorFlow: what is judged is whose
credentials reach them."""

import os
import sys

import pytest

from tests.fakes import s3_profiles
from tests.fakes.s3_server import s3_server
from tests.fakes.standin_cluster import NAMESPACE, STEP_POD, StandInCluster
from trainer.jobs import trainjob
from trainer.jobs.job import Job, JobFailed

INPUTS = f"private-artifacts/{NAMESPACE}/run-1/Trainer/job/inputs.json"
READ = ("import boto3, os\n"
        "boto3.client('s3', endpoint_url=os.environ['S3_ENDPOINT']).get_object("
        f"Bucket={s3_profiles.BUCKET!r}, Key={INPUTS!r})\n"
        "print('read the inputs', flush=True)")


@pytest.fixture
def cluster(tmp_path, monkeypatch):
  """The profile's account `default-editor` reaches its prefixes; the
  namespace's `default` has only the node's role, which the store does
  not know (403)."""
  with s3_server(buckets=(s3_profiles.BUCKET,), profiles=(NAMESPACE,)) as (endpoint, client):
    client.put_object(Bucket=s3_profiles.BUCKET, Key=INPUTS, Body=b"{}")
    access, secret = s3_profiles.profile_keys(NAMESPACE)
    identities = {"default-editor": {"AWS_ACCESS_KEY_ID": access,
                                     "AWS_SECRET_ACCESS_KEY": secret},
                  "default": {"AWS_ACCESS_KEY_ID": "node-role",
                              "AWS_SECRET_ACCESS_KEY": "node-secret"}}
    with StandInCluster(str(tmp_path), identities=identities,
                        step_account="default-editor") as standin:
      monkeypatch.setenv("KUBECONFIG", standin.kubeconfig)
      monkeypatch.setenv("KFP_POD_NAME", STEP_POD)
      yield standin, endpoint


def job(endpoint: str, **pod) -> Job:
  return Job("train-identity", [sys.executable, "-c", READ], 2,
             {"image": "i", "env": {"S3_ENDPOINT": endpoint, "AWS_REGION": "us-east-1"},
              **pod})


def test_workers_run_as_the_steps_account_and_read_its_inputs(cluster, caplog):
  """Issue 70: they ran as the namespace's `default` and got 403 reading
  what the step wrote as `default-editor`."""
  standin, endpoint = cluster
  with caplog.at_level("INFO", logger="absl"):
    trainjob.run(job(endpoint))
  assert any("workers run as service account default-editor, the step's" in r.getMessage()
             for r in caplog.records), [r.getMessage() for r in caplog.records]
  logs = [open(os.path.join(standin.folder, f)).read() for f in os.listdir(standin.folder)
          if f.startswith("train-identity-node-0-")]
  assert len(logs) == 2 and all("read the inputs" in log for log in logs), logs


def test_a_worker_whose_account_cannot_read_the_inputs_fails_the_job_naming_the_403(cluster):
  """`--train-service-account default`: the node's role, which the store
  refuses, as a cluster's would; the JobSet restarts, then the job fails."""
  _, endpoint = cluster
  with pytest.raises(JobFailed) as failed:
    trainjob.run(job(endpoint, serviceAccountName="default"))
  assert "InvalidAccessKeyId" in str(failed.value) or "403" in str(failed.value), \
      str(failed.value)

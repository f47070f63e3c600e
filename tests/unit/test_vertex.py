"""launcher/vertex.py: the CustomJob it sends, parsed strictly by
aiplatform_v1's own types. Its run (create, reattach by label, poll, fail)
against the stand-in Vertex AI is in tests/e2e/test_train_workers.py."""

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from launcher import vertex
from launcher.job import ClusterError, Job
from tests.fakes.training_engines import free_port

COMMAND = ["python", "-m", "trainer.worker", "gs://b/root/Trainer/model_run/7/job/inputs.json"]


def parsed(job: Job) -> aiplatform_v1.CustomJob:
  message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
  json_format.ParseDict(vertex.body(job), message)  # raises on any unknown field
  return aiplatform_v1.CustomJob.wrap(message)


def test_the_primary_and_the_other_workers_each_get_the_trainers_gpus_and_command():
  job = Job("train-abc", COMMAND, 3, {
      "image": "us-docker.pkg.dev/p/r/pipeline:1", "env": {"A": "1"}, "timeoutSeconds": 7200,
      "machineType": "n1-highmem-8",
      "resources": {"gpus": 2, "gpu_type": "NVIDIA_TESLA_T4", "cpu": 0, "memory_gb": 0}})
  custom = parsed(job)
  pools = custom.job_spec.worker_pool_specs
  assert [p.replica_count for p in pools] == [1, 2]
  for pool in pools:
    assert pool.machine_spec.machine_type == "n1-highmem-8"
    assert pool.machine_spec.accelerator_type.name == "NVIDIA_TESLA_T4"
    assert pool.machine_spec.accelerator_count == 2
    assert list(pool.container_spec.command) == COMMAND
    assert pool.container_spec.image_uri == "us-docker.pkg.dev/p/r/pipeline:1"
    assert [(e.name, e.value) for e in pool.container_spec.env] == [("A", "1")]
  assert custom.job_spec.scheduling.restart_job_on_worker_restart
  assert custom.job_spec.scheduling.timeout.total_seconds() == 7200
  assert dict(custom.labels) == {vertex.LABEL: "train-abc"}


def test_without_gpus_or_a_machine_type_the_workers_get_the_default_machine():
  custom = parsed(Job("train-abc", COMMAND, 2, {"image": "i"}))
  pools = custom.job_spec.worker_pool_specs
  assert [p.machine_spec.machine_type for p in pools] == [vertex.MACHINE] * 2
  assert [p.machine_spec.accelerator_count for p in pools] == [0, 0]
  assert not custom.job_spec.scheduling.timeout


def test_a_step_without_google_credentials_is_one_line(monkeypatch, tmp_path):
  """Where google-auth finds no credentials (no key file, no gcloud login,
  no metadata server answering), the step says what to do in one line."""
  for name in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_PROJECT_ID"):
    monkeypatch.delenv(name, raising=False)
  monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
  monkeypatch.setenv("GCE_METADATA_IP", f"127.0.0.1:{free_port()}")  # nothing listens
  with pytest.raises(ClusterError, match=r"^Vertex AI: no Google credentials here: run the step "
                                         r"on Vertex AI Pipelines or GKE with a service "
                                         r"account, or set GOOGLE_APPLICATION_CREDENTIALS$"):
    vertex._parent()


STATES = ["JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED",
          "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"]


@pytest.mark.parametrize("state", STATES)
def test_a_retried_step_reattaches_only_to_a_job_that_has_not_ended_badly(state):
  """Issue 53: a step retried after its CustomJob failed reattached to the
  failed job and failed at once, on every retry. The step's jobs as
  ListCustomJobs returns them (in no order): an earlier attempt's, in each
  state Vertex may leave a job in, listed before and after a failed one."""
  parent = "projects/p/locations/us-central1"

  def job(number, job_state):
    found = aiplatform_v1.CustomJob(vertex.body(Job("train-abc", COMMAND, 2, {"image": "i"})))
    found.name, found.state = f"{parent}/customJobs/{number}", job_state
    return found
  for listed in ([job(1, state)], [job(0, "JOB_STATE_FAILED"), job(1, state)],
                 [job(1, state), job(0, "JOB_STATE_FAILED")]):
    found = vertex._existing(listed)
    if state in vertex.ENDED_BADLY:
      assert found is None, f"a retried step must not reattach to a job {state}"
    else:
      assert found is not None and found.name == f"{parent}/customJobs/1", (state, found)

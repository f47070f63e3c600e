"""trainer/jobs/vertex.py: the CustomJob it sends, parsed strictly by
aiplatform_v1's own types, and where it runs and as whom; the Vertex flags
of `python -m commands.kubeflow compile` (kubeflow/compile/train_job.py) that say so.
Its run (create, reattach by label, poll, fail) against the stand-in Vertex
AI is in tests/e2e/test_train_workers.py."""

import json
import types

import pytest
from google.auth.compute_engine import _metadata
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from commands.kubeflow.cli import parser
from kubeflow.compile import train_job
from kubeflow.errors import CompileError
from tests.fakes import vertex_api
from tests.fakes.training_engines import free_port
from trainer.jobs import vertex, vertex_machines
from trainer.jobs.job import ClusterError, Job

COMMAND = ["python", "-m", "trainer.worker", "gs://b/root/Trainer/model_run/7/job/inputs.json"]


def parsed(job: Job, where=None) -> aiplatform_v1.CustomJob:
  message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
  json_format.ParseDict(vertex.body(job, where), message)  # raises on any unknown field
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
  assert [p.machine_spec.machine_type for p in pools] == [vertex_machines.DEFAULT] * 2
  assert [p.machine_spec.accelerator_count for p in pools] == [0, 0]
  assert not custom.job_spec.scheduling.timeout


def test_a_step_without_google_credentials_is_one_line(monkeypatch, tmp_path):
  """Where google-auth finds no credentials (no key file, no gcloud login,
  no metadata server answering), the step says what to do in one line."""
  for name in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_PROJECT_ID"):
    monkeypatch.delenv(name, raising=False)
  monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
  monkeypatch.setenv("GCE_METADATA_IP", f"127.0.0.1:{free_port()}")  # nothing listens
  # google-auth reads NO_GCE_CHECK once, at its import: without this it
  # pings that address three times, with back-off (3 s).
  monkeypatch.setattr(_metadata, "_NO_GCE_CHECK", True)
  with pytest.raises(ClusterError, match=r"^Vertex AI: no Google credentials here: run the step "
                                         r"on Vertex AI Pipelines or GKE with a service "
                                         r"account, or set GOOGLE_APPLICATION_CREDENTIALS$"):
    vertex._client("us-central1", {})


@pytest.mark.parametrize("region, host", [("US", "aiplatform.us.rep.googleapis.com"),
                                          ("global", "aiplatform.googleapis.com"),
                                          ("Asia-East1", "asia-east1-aiplatform.googleapis.com")])
def test_the_jobs_client_speaks_to_the_host_aiplatform_names(monkeypatch, region, host):
  from google.cloud import aiplatform_v1
  monkeypatch.setattr(aiplatform_v1, "JobServiceClient", lambda **kwargs: kwargs)
  assert vertex._client(region, {})["client_options"] == {"api_endpoint": host}


# -- Where the CustomJob runs, and as whom ----------------------------------

TRAINER_SA = "trainer@user-project.iam.gserviceaccount.com"
VPC = "projects/123456789012/global/networks/training-vpc"


def step_env(pipeline=None, **env) -> dict:
  """A Vertex AI Pipelines step's environment: the compiled Trainer's
  command run for a PipelineJob (tests/fakes/vertex_api.py resolves it as
  Vertex does), and Vertex's CLOUD_ML_PROJECT_ID, the user's project number."""
  command = vertex_api.resolved_command(vertex_api.compiled_trainer(),
                                        {**vertex_api.PIPELINE, **(pipeline or {})})
  return {"CLOUD_ML_PROJECT_ID": "123456789012", **vertex_api.command_env(command), **env}


@pytest.fixture
def no_google_auth(monkeypatch):
  """google-auth's project on a Vertex AI Pipelines step is Vertex's tenant
  project (google-auth-library-python#924): it must never be asked."""
  import google.auth

  def tenant(*args, **kwargs):
    raise AssertionError("google.auth.default() was asked for the CustomJob's project")
  monkeypatch.setattr(google.auth, "default", tenant)


def test_the_job_runs_where_the_pipeline_runs_and_as_its_service_account(no_google_auth):
  where = vertex.placement({}, step_env({"project": "user-project", "location": "europe-west4",
                                         "serviceAccount": TRAINER_SA, "network": VPC}))
  assert where == {"project": "user-project", "region": "europe-west4",
                   "serviceAccount": TRAINER_SA, "network": VPC}


def test_a_pipeline_without_a_service_account_or_network_lends_its_defaults(no_google_auth):
  """Vertex resolves the service account to the default one a PipelineJob
  runs as, the network to "": the job is not peered."""
  where = vertex.placement({}, step_env())
  assert where == {"project": vertex_api.PROJECT, "region": vertex_api.REGION,
                   "serviceAccount": vertex_api.DEFAULT_ACCOUNT}


def test_the_compile_flags_win_over_the_pipelines(no_google_auth):
  pod = {"project": "training-project", "region": "us-east1", "serviceAccount": TRAINER_SA,
         "network": VPC}
  assert vertex.placement(pod, step_env({"network": "projects/9/global/networks/other"})) == pod


def test_off_vertex_the_placeholders_count_as_absent(no_google_auth):
  """The open-source backend leaves Vertex's placeholders as they are: the
  flags, CLOUD_ML_PROJECT_ID and CLOUD_ML_REGION (--env) name the place, and
  nothing names a service account or a network."""
  env = {name: train_job.PIPELINE_PLACEHOLDERS[key] for key, name in vertex.PIPELINE_ENV.items()}
  assert vertex.placement({"project": "p", "region": "us-east1"}, env) == {
      "project": "p", "region": "us-east1"}
  assert vertex.placement({}, {**env, "CLOUD_ML_PROJECT_ID": "42",
                               "CLOUD_ML_REGION": "asia-east1"}) == {
      "project": "42", "region": "asia-east1"}


def test_the_region_is_read_from_the_environment_as_aiplatform_reads_it(no_google_auth):
  # GOOGLE_CLOUD_REGION first (aiplatform initializer.py@1.165.1 line 379),
  # in lower case.
  assert vertex.placement({"project": "p"}, {"CLOUD_ML_REGION": "asia-east1",
                                             "GOOGLE_CLOUD_REGION": "Europe-West4"}) == {
      "project": "p", "region": "europe-west4"}


@pytest.mark.parametrize("missing", ["project", "region"])
def test_a_missing_project_or_region_is_one_line(no_google_auth, missing):
  """A step compiled without the PipelineJob's place (or run where nothing
  fills it in): no region is refused, never us-central1 by default; no
  project is refused, never google-auth's."""
  env = {"CLOUD_ML_PROJECT_ID": "123456789012"} if missing == "region" else {
      "CLOUD_ML_REGION": "europe-west4"}
  flag = {"project": "--train-project PROJECT", "region": "--train-region REGION"}[missing]
  with pytest.raises(ClusterError) as raised:
    vertex.placement({}, env)
  assert str(raised.value) == (f"Vertex AI: no {missing} for the Trainer's CustomJob: compile "
                               f"with {flag} (a Vertex AI Pipelines run names its own)")


def test_the_customjob_carries_the_service_account_and_network_asked_for():
  where = {"project": "p", "region": "r", "serviceAccount": TRAINER_SA, "network": VPC}
  spec = parsed(Job("train-abc", COMMAND, 2, {"image": "i"}), where).job_spec
  assert (spec.service_account, spec.network) == (TRAINER_SA, VPC)
  spec = parsed(Job("train-abc", COMMAND, 2, {"image": "i"}), {"project": "p"}).job_spec
  assert (spec.service_account, spec.network) == ("", "")


# -- The compile flags that carry them (kubeflow/compile/train_job.py) ------

def compile_args(*flags):
  return parser().parse_args(["compile", "--image", "i", "--pipeline-root", "gs://b/r",
                              "--output-dir", "o", *flags])


def test_the_vertex_flags_reach_the_trainers_pod():
  args = compile_args("--train-project", "user-project", "--train-region", "europe-west4",
                      "--train-service-account", TRAINER_SA, "--train-network", VPC)
  config = types.SimpleNamespace(train_workers=2, train_engine="vertex", resources={})
  pod = train_job.worker_pod(config, "i", {}, args)
  assert {k: pod[k] for k in vertex.PIPELINE_ENV} == {
      "project": "user-project", "region": "europe-west4", "serviceAccount": TRAINER_SA,
      "network": VPC}


@pytest.mark.parametrize("flag,value,expected", [
    ("--train-network", "training-vpc", "projects/PROJECT_NUMBER/global/networks/NAME"),
    ("--train-network", "projects/user-project/global/networks/vpc",
     "projects/PROJECT_NUMBER/global/networks/NAME"),
    ("--train-service-account", "Trainer SA",
     "a service account's email (Vertex) or name (TrainJob, TFJob)"),
    ("--train-region", "europe", "a region such as us-central1"),
])
def test_a_malformed_vertex_flag_is_one_line(capsys, flag, value, expected):
  with pytest.raises(SystemExit):
    compile_args(flag, value)
  assert f"argument {flag}: expected {expected}, found {value!r}\n" in capsys.readouterr().err


def test_a_vertex_flag_for_another_engine_is_refused():
  config = types.SimpleNamespace(train_workers=2, train_engine="trainjob", resources={})
  with pytest.raises(CompileError, match=r"^--train-network: only for --train-engine vertex, "
                                         r"found --train-engine trainjob$"):
    train_job.step_env(config, "i", {}, compile_args("--train-network", VPC))


@pytest.mark.parametrize("given,missing,place", [
    ((), "project", None), (("--train-project", "user-project"), "region", None),
    (("--env", "CLOUD_ML_PROJECT_ID=42", "--train-region", "us-east1"), None,
     {"project": "42", "region": "us-east1"}),
    (("--train-project", "user-project", "--env", "CLOUD_ML_REGION=us-east1"), None,
     {"project": "user-project", "region": "us-east1"})])
def test_on_the_open_source_backend_the_jobs_project_and_region_are_named_at_compile(
    given, missing, place):
  """Nothing there fills in the PipelineJob's place: a spec that would
  stop at its Trainer stops at compile instead, in one line."""
  args = compile_args(*given)
  args.backend = "kubeflow"  # `--backend`, kubeflow/compile/backend.py
  config = types.SimpleNamespace(train_workers=2, train_engine="vertex", resources={})
  env = dict(args.env)
  if missing is None:
    # Where the workers' CustomJob goes, from what the Trainer's pod is given.
    pod = json.loads(train_job.step_env(config, "i", env, args)[train_job.POD_ENV])
    assert vertex.placement(pod, pod["env"]) == place
    return
  flag = {"project": "--train-project", "region": "--train-region"}[missing]
  with pytest.raises(CompileError, match=rf"^--train-engine vertex on the open-source backend: "
                                         rf"name the CustomJob's {missing} with {flag} "):
    train_job.step_env(config, "i", env, args)
  args.backend = "vertex"  # the PipelineJob's own place fills in the rest
  pod = json.loads(train_job.step_env(config, "i", env, args)[train_job.POD_ENV])
  assert pod.get("project") == dict(zip(given[::2], given[1::2])).get("--train-project")
  assert "region" not in pod


def test_the_trainer_step_is_handed_its_pipelines_place_only_for_vertex():
  """Each placeholder a task input, passed in the command: placeholders
  in the container's env would reach the step as written."""
  trainer = vertex_api.compiled_trainer()
  params = trainer["task"]["inputs"]["parameters"]
  assert sorted(p["runtimeValue"]["constant"] for p in params.values()) == sorted(
      train_job.PIPELINE_PLACEHOLDERS.values())
  assert trainer["container"]["command"][0] == "env"
  assert trainer["container"]["command"][-3:] == ["python", "-m", "kubeflow.steps.entrypoint"]
  other = vertex_api.compiled_trainer(types.SimpleNamespace(train_workers=2,
                                                            train_engine="trainjob"))
  assert other["container"]["command"] == ["python", "-m", "kubeflow.steps.entrypoint"]


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

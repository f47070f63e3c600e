"""kubeflow/compile/train_job.py: where the Trainer's GPUs and placement go,
seen in the compiled spec (the step's own pod) and in the job each engine is
sent (each worker's pod)."""

import json
import types

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile import train_job
from kubeflow.compile.compiler import executor_labels
from kubeflow.errors import CompileError
from trainer.jobs import tfjob, trainjob
from trainer.jobs.job import POD_ENV, Job

IMAGE = "registry.example.com/tfrecord-pipeline:1.0"
GPU_POOL = ("--resource", "Trainer:cpu=4,memory=16,gpus=1",
            "--node-selector", "Trainer:pool=gpu",
            "--toleration", "Trainer:nvidia.com/gpu:NoSchedule")
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
ONE_GPU = {"cpu": "4.0", "memory": "16.0G", "nvidia.com/gpu": "1"}


def compile_trainer(out, *flags, backend="kubeflow"):
  """(the Trainer step's container, its platform config or None, its
  TRAIN_JOB_POD or None), compiled with `flags`."""
  root = "gs://bkt/pipelines"
  code = kubeflow(["compile", "--backend", backend, "--image", IMAGE, "--pipeline-root", root,
                   "--data-root", "gs://bkt/data/digits", "--output-dir", str(out),
                   "--skip-data-check", *flags])
  assert code == 0
  with open(out / "pipeline.yaml") as f:
    spec, *platform = yaml.safe_load_all(f)
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())  # as both backends read it
  label = executor_labels(spec)[train_job.NODE]
  container = spec["deploymentSpec"]["executors"][label]["container"]
  placed = (platform[0]["platforms"]["kubernetes"]["deploymentSpec"]["executors"].get(label)
            if platform else None)
  pod = [e["value"] for e in container["env"] if e["name"] == POD_ENV]
  return container, placed, json.loads(pod[0]) if pod else None


@pytest.mark.parametrize("engine,worker_of", [
    ("trainjob", lambda body: (
        body["spec"]["trainer"]["resourcesPerNode"],
        body["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"][
            "replicatedJobs"][0]["template"]["spec"]["template"]["spec"])),
    ("tfjob", lambda body: (
        body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
            "resources"],
        body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]))])
def test_with_two_workers_they_hold_the_gpus_and_the_pool_and_the_step_neither(
    tmp_path, engine, worker_of):
  """Given the GPU too, the step held three for two workers: on a pool of
  exactly two free, one worker stayed Pending and the job never started."""
  container, placed, pod = compile_trainer(
      tmp_path, "--train-workers", "2", "--train-engine", engine, *GPU_POOL)
  assert container["resources"] == {"cpuRequest": 1, "memoryRequest": 2}, container
  assert placed is None or not {"nodeSelector", "tolerations"} & set(placed), placed
  body = {"trainjob": trainjob, "tfjob": tfjob}[engine].body(
      Job("train-abc", ["python"], 2, pod), "kubeflow", None)
  resources, worker = worker_of(body)
  assert resources == {"requests": ONE_GPU, "limits": ONE_GPU}, resources
  assert worker["nodeSelector"] == {"pool": "gpu"}, worker
  assert worker["tolerations"] == [TOLERATION], worker


def test_with_one_worker_the_step_trains_on_its_gpu_in_its_pool(tmp_path):
  """No engine then (the configuration refuses one): the step is the worker."""
  container, placed, pod = compile_trainer(tmp_path, "--train-workers", "1", *GPU_POOL)
  assert container["resources"] == {
      "cpuLimit": 4.0, "cpuRequest": 4.0, "memoryLimit": 16.0, "memoryRequest": 16.0,
      "accelerator": {"type": "nvidia.com/gpu", "count": "1"}}, container["resources"]
  assert placed["nodeSelector"] == {"labels": {"pool": "gpu"}}, placed
  assert placed["tolerations"] == [TOLERATION], placed
  assert pod is None


def test_a_vertex_trainer_step_watching_its_customjob_asks_for_no_gpu(tmp_path):
  """Its workers are Vertex VMs, each with the GPU; a GPU on the step's own
  machine was one more of the project's quota for the whole training."""
  container, _, pod = compile_trainer(
      tmp_path, "--train-workers", "2", "--train-engine", "vertex",
      "--resource", "Trainer:gpus=1,gpu_type=NVIDIA_TESLA_T4", backend="vertex")
  assert container["resources"] == {"cpuRequest": 1, "memoryRequest": 2}, container
  assert pod["resources"]["gpus"] == 1 and pod["resources"]["gpu_type"] == "NVIDIA_TESLA_T4"


def test_on_the_open_source_backend_a_customjobs_gpu_has_vertex_name_and_stays_off_the_pod(
    tmp_path):
  """The step's pod asks Kubernetes for none of it, so Vertex's name compiles;
  the Trainer's node selector stays on the step (a CustomJob takes none)."""
  container, placed, pod = compile_trainer(
      tmp_path, "--train-workers", "2", "--train-engine", "vertex",
      "--train-project", "my-project", "--train-region", "us-central1",
      "--resource", "Trainer:gpus=1,gpu_type=NVIDIA_TESLA_T4",
      "--node-selector", "Trainer:pool=cpu")
  assert container["resources"] == {"cpuRequest": 1, "memoryRequest": 2}, container
  assert placed["nodeSelector"] == {"labels": {"pool": "cpu"}}, placed
  assert pod["resources"]["gpu_type"] == "NVIDIA_TESLA_T4"


# -- Whom the workers run as ---------------------------------------------------

def _compile_args(*flags):
  from commands.kubeflow.cli import parser
  return parser().parse_args(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                              "--output-dir", "o", *flags])


@pytest.mark.parametrize("engine", ["trainjob", "tfjob"])
def test_train_service_account_names_the_workers_kubernetes_account(engine):
  """Issue 70: workers ran as the namespace's `default` account; with the
  flag they run as the one named, in the engine's own field."""
  config = types.SimpleNamespace(train_workers=2, train_engine=engine, resources={})
  pod = train_job.worker_pod(config, IMAGE, {}, _compile_args(
      "--train-service-account", "trainer-reader"))
  assert pod["serviceAccountName"] == "trainer-reader" and "serviceAccount" not in pod
  made = {"trainjob": trainjob, "tfjob": tfjob}[engine].body(
      Job("train-abc", ["python"], 2, pod), "team-a", None)
  worker = (made["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"][
      "replicatedJobs"][0]["template"]["spec"]["template"]["spec"] if engine == "trainjob"
      else made["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"])
  assert worker["serviceAccountName"] == "trainer-reader", worker


@pytest.mark.parametrize("engine,account,expected", [
    ("trainjob", "trainer@p.iam.gserviceaccount.com",
     "--train-service-account: expected the name of a Kubernetes service account in the "
     "step's namespace for --train-engine trainjob, found the email "
     "trainer@p.iam.gserviceaccount.com: bind a Google one to it (Workload Identity)"),
    ("vertex", "trainer-reader",
     "--train-service-account: expected a service account's email for --train-engine vertex, "
     "found 'trainer-reader'"),
    (None, "trainer-reader",
     "--train-service-account: only for --train-engine vertex, found --train-engine (none)")])
def test_a_service_account_of_the_other_kind_is_one_line(engine, account, expected):
  config = types.SimpleNamespace(train_workers=2, train_engine=engine, resources={})
  with pytest.raises(CompileError) as e:
    train_job.worker_pod(config, IMAGE, {}, _compile_args("--train-service-account", account))
  assert str(e.value) == expected


def test_train_heartbeat_timeout_is_the_tfjob_workers_liveness_bound():
  """Issue 70: a frozen TFJob worker is restarted once it has not stepped
  for this long (docs/kubeflow.md)."""
  config = types.SimpleNamespace(train_workers=2, train_engine="tfjob", resources={})
  pod = train_job.worker_pod(config, IMAGE, {}, _compile_args(
      "--train-heartbeat-timeout", "120"))
  assert pod["heartbeatTimeoutSeconds"] == 120
  made = tfjob.body(Job("train-abc", ["python"], 2, pod), "team-a", None)
  probe = made["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
      "livenessProbe"]
  assert "> 120)" in probe["exec"]["command"][2], probe


@pytest.mark.parametrize("flag, value, engine, workers", [
    ("--train-heartbeat-timeout", "120", "trainjob", 2),
    ("--train-heartbeat-timeout", "120", "tfjob", 1),
    ("--train-machine-type", "g2-standard-8", "tfjob", 2)])
def test_a_flag_no_worker_reads_is_refused_naming_the_engine_it_is_for(
    flag, value, engine, workers):
  """A heartbeat bound on TrainJob workers, or a Vertex machine for TFJob
  workers, would be silently dropped."""
  config = types.SimpleNamespace(train_workers=workers, train_engine=engine, resources={})
  with pytest.raises(CompileError) as e:
    train_job.step_env(config, IMAGE, {}, _compile_args(flag, value))
  wanted = "tfjob" if flag == "--train-heartbeat-timeout" else "vertex"
  assert str(e.value) == (f"{flag}: only for --train-workers N (more than 1) on --train-engine "
                          f"{wanted}, found {workers} worker(s) on --train-engine {engine}")

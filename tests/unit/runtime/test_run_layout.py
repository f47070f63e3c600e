"""runtime/run_layout.py: a run's folder found from a step's output URI, as
each backend lays its outputs out."""

import pytest

from runtime import run_layout

# A step's output, as each backend names it (the open-source driver's
# GenerateOutputURI; Vertex AI, by TFX's kubeflow_v2_run_executor.py).
OSS = "s3://pipelines/root/digits/9b1c-run/Trainer/2f6e0a/model"
VERTEX = "gs://pipelines/root/123456789012/digits-20261128020000/Trainer_-8841/model"


@pytest.mark.parametrize("uri, backend, runs, run_id", [
    (OSS, "kubeflow", "s3://pipelines/root/digits", "9b1c-run"),
    (VERTEX, "vertex", "gs://pipelines/root/123456789012", "digits-20261128020000")])
def test_a_steps_output_names_its_run_on_each_backend(uri, backend, runs, run_id):
  found = run_layout.locate([uri], "digits", "Trainer")
  assert (found.backend, found.runs, found.run_id) == (backend, runs, run_id), found
  assert found.run == f"{runs}/{run_id}"
  # What lasts across runs lies in the pipeline's own folder on both.
  assert found.home == "s3://pipelines/root/digits".replace(
      "s3", "gs" if backend == "vertex" else "s3")
  assert found.writer(uri) == (run_id, "Trainer")


def test_another_tasks_or_pipelines_output_is_no_run_of_this_step():
  assert run_layout.locate([OSS], "digits", "Evaluator") is None
  assert run_layout.locate([OSS], "flowers", "Trainer") is None
  assert run_layout.locate([VERTEX], "digits", "Train") is None
  assert run_layout.locate(["/tmp/local/Trainer/model/3"], "digits", "Trainer") is None


def test_a_client_names_a_vertex_run_from_the_jobs_project_number():
  found = run_layout.of_run("vertex", "gs://pipelines/root/", "digits", "digits-1",
                            "123456789012")
  assert found.run == "gs://pipelines/root/123456789012/digits-1"
  # Task folders carry Vertex's task id; names may hold underscores.
  assert found.writer(f"{found.run}/serving_check_77/x") == ("digits-1", "serving_check")
  assert found.writer("gs://pipelines/root/digits/x/y") is None


def test_a_step_with_no_output_artifact_finds_its_run_from_its_output_file(monkeypatch):
  """A gate writes no artifact; its executor output file lies in its task's
  folder, handed as a path on the bucket's mount."""
  from kubeflow.steps import records
  monkeypatch.setenv(run_layout.PIPELINE_ENV, "digits")
  for output_file, run in (
      ("/gcs/pipelines/root/123456789012/digits-1/AnomaliesGate_-42/executor_output.json",
       "gs://pipelines/root/123456789012/digits-1"),
      ("/s3/pipelines/root/digits/run-7/AnomaliesGate/9f2c/output_metadata.json",
       "s3://pipelines/root/digits/run-7")):
    invocation = {"outputs": {"artifacts": {}, "outputFile": output_file}}
    assert records.run_of(invocation, "AnomaliesGate").run == run, output_file
  # Before 2.15 the open-source backend hands the pod's own path: no run.
  invocation = {"outputs": {"outputFile": "/tmp/kfp_outputs/output_metadata.json"}}
  assert records.run_of(invocation, "AnomaliesGate") is None

"""kubeflow/steps/backend.py: what every step checks before it starts, from
the executor input the open-source backend's launcher hands it: outputs
under a root TensorFlow cannot open stop the step in one line naming the
fix; the launcher's own `executor-logs` output is told apart."""

import pytest

from kubeflow.steps import backend
from runtime import storage


def _executor_input(*uris: str) -> dict:
  return {"outputs": {"artifacts": {
      name: {"artifacts": [{"name": name, "uri": uri}]}
      for name, uri in zip(("examples", backend.LOGS, "statistics"), uris)}}}


def test_a_step_under_a_bucket_or_a_folder_starts():
  assert backend.refusal(_executor_input("s3://bucket/root/run/Step/examples",
                                         "gs://bucket/root/run/Step/executor-logs",
                                         "/tmp/root/run/Step/statistics")) is None
  assert backend.refusal({}) is None


def test_a_run_on_the_backends_default_root_is_refused_naming_the_configmap():
  line = backend.refusal(_executor_input(
      f"{backend.DEFAULT_ROOT}/digits/run-1/ImportExampleGen/examples"))
  assert line == (
      "error: this run writes its outputs to minio://mlpipeline/v2/artifacts/digits/..., "
      "under the backend's in-cluster default root minio://mlpipeline/v2/artifacts: the "
      "run named no pipeline root, and the namespace's kfp-launcher ConfigMap sets none; "
      "TensorFlow cannot open minio://. Start runs with python -m commands.kubeflow submit "
      "or schedule, which send the compiled root, or set defaultPipelineRoot (s3://... or "
      "gs://...) in the kfp-launcher ConfigMap of the run's namespace")


def test_a_run_whose_own_root_tensorflow_cannot_open_is_refused():
  with pytest.raises(storage.StorageError) as raised:
    backend.check_root(["s3://fine/run/A/out",
                        "minio://bucket/root/run-1/Trainer/model"])
  assert str(raised.value).startswith(
      "this run writes its outputs to minio://bucket/root/..., under the run's pipeline "
      "root; TensorFlow cannot open minio://.")


def test_the_launchers_own_output_is_told_apart():
  outputs = _executor_input("s3://b/examples", "s3://b/logs")["outputs"]["artifacts"]
  assert backend.launcher_outputs(outputs) == [backend.LOGS]
  assert backend.output_uris({"outputs": {"artifacts": outputs}}) == ["s3://b/examples",
                                                                      "s3://b/logs"]

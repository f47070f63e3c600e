"""kubeflow/steps/backend.py: what every step checks before it starts, from
the executor input the open-source backend's launcher hands it: outputs
under a root TensorFlow cannot open stop the step in one line naming the
fix; the launcher's own `executor-logs` output is told apart; a step holding
a multi-user profile's keys stops, in one line, on a path they do not reach."""

import pytest

from kubeflow import profile_paths
from kubeflow.steps import backend
from runtime import kube, storage


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


@pytest.fixture
def no_pod_namespace(monkeypatch, tmp_path):
  """No service account mounted: the namespace is the one compiled for."""
  monkeypatch.setattr(kube, "NAMESPACE_FILE", str(tmp_path / "none"))


PROFILE = {profile_paths.PROFILE_ENV: "team-a"}
INSIDE = "s3://mlpipeline/private/team-a"


def _profile_input(root: str, data_root: str) -> dict:
  executor_input = _executor_input(f"{root}/digits/run-1/SpanWindow/u1/input_config",
                                   f"{root}/digits/run-1/SpanWindow/u1/executor-logs-0")
  executor_input["inputs"] = {"parameterValues": {
      "data_root": data_root, "train_steps": "100",
      "push_destination": '{"filesystem": {"base_directory": "%s/serving"}}' % INSIDE}}
  return executor_input


def test_a_step_with_a_profiles_keys_starts_under_its_prefixes(no_pod_namespace):
  backend.check_run(_profile_input(f"{INSIDE}/tfx", f"{INSIDE}/data"), PROFILE)
  # Compiled without --namespace, or for the profile's keys in another
  # Secret: no rule of the profile's applies.
  backend.check_run(_profile_input("s3://mlpipeline/tfx", "s3://data/digits"), {})


@pytest.mark.parametrize("root, data_root, named", [
    ("s3://mlpipeline/tfx", f"{INSIDE}/data",
     "the run's pipeline root: this step's output examples "
     "s3://mlpipeline/tfx/digits/run-1/SpanWindow/u1/input_config"),
    (f"{INSIDE}/tfx", "s3://mlpipeline/data/digits",
     "this step's parameter data_root s3://mlpipeline/data/digits")])
def test_a_root_or_data_root_outside_them_stops_the_step_in_one_line(
    no_pod_namespace, root, data_root, named):
  with pytest.raises(storage.StorageError) as raised:
    backend.check_run(_profile_input(root, data_root), PROFILE)
  line = str(raised.value)
  assert line.startswith(f"{named}: the profile namespace team-a's keys "), \
      f"expected {named!r} refused first, found {line!r}"
  assert "s3://mlpipeline/private-artifacts/team-a/, s3://mlpipeline/private/team-a/" in line
  assert "\n" not in line
  assert backend.refusal(_profile_input(root, data_root)) is None, \
      "expected no rule without the compiled namespace in the step's environment"

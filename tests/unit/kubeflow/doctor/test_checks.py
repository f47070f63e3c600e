"""Every check on a clean stand-in install, one bundle at a time: all ok."""

import pytest

from commands.kubeflow import runs
from kubeflow.doctor import checks, needs
from kubeflow.doctor.cluster import Reader
from tests.doctor_install import Install, spec


@pytest.mark.parametrize("namespace", ["team-a", "kubeflow"])
def test_a_clean_install_passes_every_check_in_the_order_a_run_meets_them(
    tmp_path, monkeypatch, namespace):
  path = spec(tmp_path / "c", namespace=namespace, engine="trainjob", kserve=True)
  wanted = needs.read(runs.load_spec(path), path)
  with Install(tmp_path, monkeypatch, namespace=namespace, spec_path=path):
    found = checks.offline(wanted) + checks.on_cluster(wanted, Reader(wanted.namespace))
  assert [line.verdict for line in found] == ["ok"] * len(found), [str(x) for x in found]
  account = "default-editor" if namespace == "team-a" else "pipeline-runner"
  assert [str(line).split(" (")[0] for line in found] == [
      *(["ok  the run's paths within namespace team-a's prefixes"] if namespace == "team-a"
        else []),
      f"ok  the launcher's store for {wanted.root}",
      "ok  the Secret mlpipeline-minio-artifact",
      "ok  the TrainJob API",
      f"ok  the TrainingRuntime tfrecord-pipeline-tensorflow in namespace {namespace}",
      "ok  the TrainJob's placement of its workers",
      f"ok  the step's service account {account} may run TrainJobs",
      "ok  KServe's InferenceService API",
      "ok  KServe's mode for InferenceService digits",
      "ok  the predictor's service account s3-reader and its S3 Secret"]

"""kubeflow/api/run_folders.py: the root a run is sent, the root the backend
gives a run that named none, and what `runs` says a finished run did, read
from its steps' records in a run folder in tmp_path (on a cluster, a bucket)."""

import types

import pytest
from kubernetes.client.exceptions import ApiException

from kubeflow.api import run_folders
from kubeflow.errors import KubeflowError
from kubeflow.steps import backend
from kubeflow.steps import records as step_records
from runtime import storage


def test_a_run_is_sent_the_flags_root_else_the_compiled_one():
  spec = {"defaultPipelineRoot": "s3://bucket/compiled"}
  assert run_folders.run_root("", spec) == "s3://bucket/compiled"
  assert run_folders.run_root("gs://other/root", spec) == "gs://other/root"
  with pytest.raises(storage.StorageError, match="--pipeline-root"):
    run_folders.run_root("minio://mlpipeline/root", spec)


class _Core:
  def __init__(self, answer):
    self.answer = answer

  def read_namespaced_config_map(self, name, namespace):
    assert (name, namespace) == (backend.CONFIG_MAP, "team-a")
    if isinstance(self.answer, ApiException):
      raise self.answer
    return self.answer


@pytest.mark.parametrize("answer, root", [
    (types.SimpleNamespace(data={"defaultPipelineRoot": "s3://team-a/root"}), "s3://team-a/root"),
    (types.SimpleNamespace(data={}), backend.DEFAULT_ROOT),
    (ApiException(status=404, reason="Not Found"), backend.DEFAULT_ROOT)])
def test_a_run_that_named_no_root_is_where_the_namespaces_configmap_says(
    monkeypatch, answer, root):
  from trainer.jobs import kube
  monkeypatch.setattr(kube, "Cluster", lambda: types.SimpleNamespace(core=_Core(answer)))
  assert run_folders.namespace_root("team-a") == root


def test_a_configmap_the_user_may_not_read_is_one_line(monkeypatch):
  from trainer.jobs import kube
  denied = ApiException(status=403, reason="Forbidden")
  monkeypatch.setattr(kube, "Cluster", lambda: types.SimpleNamespace(core=_Core(denied)))
  with pytest.raises(KubeflowError) as raised:
    run_folders.namespace_root("team-a")
  assert str(raised.value) == ("cannot read the kfp-launcher ConfigMap of namespace team-a: "
                               "HTTP 403 Forbidden")


def _run(state: str, root: str = "", run_id: str = "run-1"):
  config = types.SimpleNamespace(pipeline_root=root) if root else None
  return types.SimpleNamespace(state=state, runtime_config=config, run_id=run_id)


def _no_default():
  raise AssertionError("the run named its root: the namespace's is not read")


def test_a_finished_runs_outcome_is_read_from_its_steps_records(tmp_path):
  root = str(tmp_path / "root")
  folder = f"{root}/digits/run-1"
  step_records.write(folder, "Trainer", step_records.FAILED,
                     message="ValueError: labels out of range")
  assert run_folders.outcome(_run("FAILED", root), "digits", _no_default) == (
      "failed at Trainer: ValueError: labels out of range; nothing pushed")
  step_records.write(f"{root}/digits/run-2", "Pusher", step_records.COMPLETE,
                     outputs={"pushed_model": {"metadata": {"pushed": 1,
                                                            "pushed_version": "17"}}})
  assert run_folders.outcome(_run("SUCCEEDED", root, "run-2"), "digits",
                             _no_default) == "pushed version 17"


def test_a_run_still_going_or_without_records_or_root_says_so(tmp_path):
  root = str(tmp_path / "root")
  assert run_folders.outcome(_run("RUNNING", root), "digits", _no_default) == ""
  assert run_folders.outcome(_run("SUCCEEDED", root), "digits", _no_default) == (
      f"no step records under {root}/digits/run-1")

  def unreadable():
    raise KubeflowError("cannot read the kfp-launcher ConfigMap of namespace a: HTTP 403 x")
  assert run_folders.outcome(_run("SUCCEEDED"), "digits", unreadable) == (
      "outcome unknown: the run named no pipeline root, and cannot read the kfp-launcher "
      "ConfigMap of namespace a: HTTP 403 x; pass --pipeline-root")
  assert run_folders.outcome(_run("CANCELED"), "digits", lambda: root) == (
      f"no step records under {root}/digits/run-1")

"""The Trainer's job: its engine's API, the TrainJob's runtime, and the
step's service account's rights, each planted in a clean stand-in install."""

import pytest

from kubeflow.doctor import training
from tests.doctor_install import ADMIN, GPU_TAINT, POOL, Install, doctor, only, spec
from trainer.jobs import tfjob, trainjob

RUNTIME = ("trainer.kubeflow.org/v1alpha1", "team-a", "trainingruntimes",
           "tfrecord-pipeline-tensorflow")
BINDING = ("rbac.authorization.k8s.io/v1", "team-a", "rolebindings",
           "tfrecord-pipeline-trainer")


@pytest.mark.parametrize("engine, kind", [("trainjob", "TrainJob"), ("tfjob", "TFJob")])
def test_each_engine_on_a_clean_install_is_ok(tmp_path, monkeypatch, capsys, engine, kind):
  path = spec(tmp_path / "c", engine=engine)
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 0, found
  assert only(found, f"ok  the {kind} API")
  assert only(found, f"ok  the step's service account default-editor may run {kind}s")
  assert bool([x for x in found if "TrainingRuntime" in x]) == (engine == "trainjob")


@pytest.mark.parametrize("engine, plural", [("trainjob", "trainjobs"), ("tfjob", "tfjobs")])
def test_an_engine_the_cluster_does_not_serve_fails_naming_what_to_install(
    tmp_path, monkeypatch, capsys, engine, plural):
  path = spec(tmp_path / "c", engine=engine)
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    install.uninstall(plural)
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL the ")
  assert f"({plural}." in line and "found no such API" in line, line
  assert line.endswith('fix: install the engine (docs/kubeflow.md, "Training on several '
                       'machines")'), line


def test_a_missing_runtime_fails_naming_its_manifest(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="trainjob")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    install.store.delete(RUNTIME)
    status, found = doctor(capsys, path)
  assert status == 1
  assert only(found, "FAIL the TrainingRuntime tfrecord-pipeline-tensorflow in namespace "
                     "team-a").endswith(
      "fix: the cluster admin applies it: kubectl apply -n team-a -f "
      "kubeflow/manifests/trainingruntime.yaml")


def test_a_step_account_that_may_not_create_the_job_fails_naming_the_rights(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="trainjob")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    install.store.delete(BINDING)
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL the step's service account default-editor may run TrainJobs")
  assert "found denied: create trainjobs, get trainjobs" in line, line
  assert "fix: kubectl apply -n team-a -f kubeflow/manifests/trainer-rbac.yaml" in line, line


def test_a_user_who_may_not_review_rights_gets_not_checked(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="trainjob")
  rules = [{**ADMIN[0], "apiGroups": ["", "trainer.kubeflow.org"]}]
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=rules):
    status, found = doctor(capsys, path)
  assert status == 0, found
  line = only(found, "not checked the step's service account default-editor")
  assert "kubectl auth can-i create trainjobs.trainer.kubeflow.org -n team-a --as " \
         "system:serviceaccount:team-a:default-editor" in line, line


def test_the_rights_asked_are_the_manifests_for_the_engine_and_pods():
  assert ("create", "trainer.kubeflow.org", "trainjobs") in training.needed_rights(trainjob)
  assert ("get", "", "pods/log") in training.needed_rights(tfjob)
  assert not [r for r in training.needed_rights(tfjob) if r[1] == trainjob.group]
  assert training.step_account("kubeflow") == "pipeline-runner"


@pytest.mark.parametrize("version, form", [("2.3", "runtimePatches (Kubeflow Trainer 2.2 and "
                                                   "later)"),
                                           ("2.1", "podTemplateOverrides (Kubeflow Trainer 2.1)"),
                                           ("2.0", "podSpecOverrides (Kubeflow Trainer 2.0)")])
def test_the_installed_trainer_says_which_form_the_workers_placement_takes(
    tmp_path, monkeypatch, capsys, version, form):
  pod = {"nodeSelector": POOL, "tolerations": [GPU_TAINT]}
  path = spec(tmp_path / "c", engine="trainjob", worker_pod=pod)
  with Install(tmp_path, monkeypatch, spec_path=path, trainer_version=version):
    status, found = doctor(capsys, path)
  assert status == 0, found
  assert only(found, "ok  the TrainJob's placement of its workers (nodeSelector, "
                     "tolerations, serviceAccountName): spec.").endswith(form)


def test_trainer_2_0_with_image_pull_secrets_fails_as_the_launcher_would(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="trainjob", worker_pod={"imagePullSecrets": ["regcred"]})
  with Install(tmp_path, monkeypatch, spec_path=path, trainer_version="2.1"):
    assert doctor(capsys, path)[0] == 0
  with Install(tmp_path, monkeypatch, spec_path=path, trainer_version="2.0"):
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL the TrainJob's placement of its workers")
  assert "found 2.0, whose podSpecOverrides has none: regcred cannot reach the workers" in line
  assert "fix: ask the cluster admin to install Kubeflow Trainer v2.1.0 or later" in line, line


def test_a_user_who_may_not_read_the_crd_gets_not_checked_with_the_command(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="trainjob")
  rules = [{**ADMIN[0], "apiGroups": ["", "trainer.kubeflow.org", "authorization.k8s.io"]}]
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=rules):
    status, found = doctor(capsys, path)
  assert status == 0, found
  line = only(found, "not checked the TrainJob's placement of its workers")
  assert "may not get customresourcedefinitions.apiextensions.k8s.io " \
         "trainjobs.trainer.kubeflow.org (cluster-scoped) (HTTP 403)" in line, line
  assert "kubectl get crd trainjobs.trainer.kubeflow.org" in line, line

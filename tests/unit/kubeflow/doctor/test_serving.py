"""KServe's API, for a spec compiled with --kserve."""

import pytest

from tests.doctor_install import Install, doctor, only, spec


def test_a_cluster_without_kserve_fails_for_a_spec_that_deploys_to_it(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", kserve=True)
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    status, found = doctor(capsys, path)
    assert status == 0
    assert only(found, "ok  KServe's InferenceService API")
    install.uninstall("inferenceservices")
    status, found = doctor(capsys, path)
  assert status == 1
  assert only(found, "FAIL KServe's InferenceService API").endswith(
      'fix: install KServe v0.15 to v0.20 (docs/kubeflow.md, "Serving on KServe")')


ISVC = ("serving.kserve.io/v1beta1", "team-a", "inferenceservices", "digits")


@pytest.mark.parametrize("version, recorded", [("0.15", "RawDeployment"), ("0.20", "Standard")])
def test_an_inference_service_recorded_in_another_mode_fails_naming_the_flag(
    tmp_path, monkeypatch, capsys, version, recorded):
  path = spec(tmp_path / "c", kserve=True, kserve_mode="knative")
  with Install(tmp_path, monkeypatch, spec_path=path, kserve_version=version) as install:
    status, found = doctor(capsys, path)
    assert (status, only(found, "ok  KServe's mode")) == (
        0, "ok  KServe's mode for InferenceService digits (Knative) (a new one)")
    install.store.create(ISVC, {"apiVersion": "serving.kserve.io/v1beta1",
                                "kind": "InferenceService", "spec": {"predictor": {}},
                                "status": {"deploymentMode": recorded}})
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL KServe's mode for InferenceService digits (Knative)")
  assert "found it recorded in Standard mode, which KServe refuses to change" in line, line
  assert "fix: compile with --kserve-mode standard, or --kserve naming another " \
         "InferenceService" in line, line
  same = spec(tmp_path / "s", kserve=True, kserve_mode="standard")
  with Install(tmp_path, monkeypatch, spec_path=same, kserve_version=version) as install:
    install.store.create(ISVC, {"spec": {"predictor": {}},
                                "status": {"deploymentMode": recorded}})
    status, found = doctor(capsys, same)
  assert (status, only(found, "ok  KServe's mode")) == (
      0, "ok  KServe's mode for InferenceService digits (Standard)")

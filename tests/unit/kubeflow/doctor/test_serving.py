"""KServe's API, for a spec compiled with --kserve."""

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

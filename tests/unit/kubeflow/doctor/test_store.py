"""The launcher's store and its Secrets, each misconfiguration planted in a
clean stand-in install (tests/doctor_install.py) and named by doctor."""

import pytest

from tests.doctor_install import READER, Install, doctor, only, spec
from tests.fakes import kfp_server

CONFIG_MAP = ("v1", "team-a", "configmaps", "kfp-launcher")


def test_a_clean_install_is_all_ok(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 0, found
  # The places are listed and written to only where this machine reaches the store
  # (tests/processes/kubeflow/doctor/test_data.py); the cluster's own name is not.
  listed = only(found, "not checked the pipeline root, the data root, the serving dir, "
                       "reached with the steps' keys")
  assert "S3_ENDPOINT http://seaweedfs.kubeflow:9000 is the cluster's own name; reach the " \
         "store through a port-forward" in listed, listed
  assert all(line.startswith("ok  ") for line in found if line != listed), found
  assert only(found, "ok  the launcher's store for s3://mlpipeline/private/team-a/p")


@pytest.mark.parametrize("planted, found_text", [
    (lambda store: store.delete(CONFIG_MAP), "found no such ConfigMap"),
    (lambda store: store.update(CONFIG_MAP, lambda c: c["data"].pop("providers")),
     "found a ConfigMap without `providers`")])
def test_an_s3_root_without_providers_fails_naming_the_file_to_apply(
    tmp_path, monkeypatch, capsys, planted, found_text):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    planted(install.store)
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL the launcher's store for s3://mlpipeline/private/team-a/p")
  assert "expected `providers` with s3 endpoint seaweedfs.kubeflow:9000" in line, line
  assert found_text in line, line
  assert line.endswith(f"fix: kubectl apply -n team-a -f {tmp_path / 'c' / 'kfp-launcher.yaml'}")


def test_providers_naming_another_store_than_the_steps_use_fail(tmp_path, monkeypatch, capsys):
  # The ConfigMap of a 2.15 install (MinIO), the steps compiled for 2.16's SeaweedFS.
  old = spec(tmp_path / "old", endpoint="http://minio-service.kubeflow:9000")
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=old):
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, "FAIL the launcher's store")
  assert ("expected the s3 default endpoint seaweedfs.kubeflow:9000 (the steps' S3_ENDPOINT), "
          "found minio-service.kubeflow:9000") in line, line


def test_a_missing_secret_or_key_fails_naming_it(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    del install.store.secrets["mlpipeline-minio-artifact"]["secretkey"]
    status, found = doctor(capsys, path)
    assert status == 1
    line = only(found, "FAIL the Secret mlpipeline-minio-artifact")
    assert "expected the keys accesskey, secretkey, found accesskey" in line, line
    assert "fix: add secretkey to it" in line, line
    del install.store.secrets["mlpipeline-minio-artifact"]
    status, found = doctor(capsys, path)
  line = only(found, "FAIL the Secret mlpipeline-minio-artifact")
  assert "expected it in namespace team-a, found none; fix: kubectl -n team-a create secret " \
         "generic mlpipeline-minio-artifact --from-literal=accesskey=..." in line, line


def test_a_user_who_may_not_read_secrets_gets_not_checked_not_a_failure(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=READER):
    status, found = doctor(capsys, path)
  assert status == 0, found
  line = only(found, "not checked the Secret mlpipeline-minio-artifact")
  assert "may not get secret mlpipeline-minio-artifact in namespace team-a (HTTP 403)" in line
  assert line.endswith("an admin can look: kubectl -n team-a describe secret "
                       "mlpipeline-minio-artifact"), line


def test_a_gs_root_needs_no_providers_but_the_steps_secret_all_the_same(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", namespace=None, root="gs://bucket/p")
  with Install(tmp_path, monkeypatch, namespace="kubeflow", spec_path=path) as install:
    status, found = doctor(capsys, path)
    found = [x for x in found if "the data root" not in x]  # an s3:// one: test_data.py
    assert (status, found) == (0, [
        "ok  the Secret mlpipeline-minio-artifact (keys accesskey, secretkey), for the "
        "steps' --secret-env"])
    install.store.secrets.clear()
    status, found = doctor(capsys, path)
  assert status == 1
  assert only(found, "FAIL the Secret mlpipeline-minio-artifact (keys accesskey, secretkey), "
                     "for the steps' --secret-env: expected it in namespace kubeflow")


@pytest.mark.parametrize("version, endpoint, verdict", [
    ((2, 17), "http://minio-service.kubeflow:9000", "FAIL"),
    ((2, 16), "http://minio-service.kubeflow:9000", "FAIL"),
    ((2, 15), "http://minio-service.kubeflow:9000", "ok"),
    ((2, 17), "http://seaweedfs.kubeflow:9000", "ok"),
    ((2, 15), "http://seaweedfs.kubeflow:9000", "FAIL")])
def test_the_installs_version_names_its_store_and_the_steps_must_name_it(
    tmp_path, monkeypatch, capsys, version, endpoint, verdict):
  path = spec(tmp_path / "c", namespace=None, endpoint=endpoint)
  host, _, stop = kfp_server.serve(version=version)
  try:
    with Install(tmp_path, monkeypatch, namespace="kubeflow", spec_path=path):
      status, found = doctor(capsys, path, "--host", host)
  finally:
    stop()
  assert status == (verdict == "FAIL"), found
  tag = ".".join(map(str, version)) + ".0"
  line = only(found, f"{'FAIL' if verdict == 'FAIL' else 'ok '} the install's own store for S3_ENDPOINT {endpoint}")
  if verdict == "FAIL":
    wanted = "seaweedfs" if version >= (2, 16) else "minio-service"
    assert f": expected http://{wanted}.kubeflow:9000 on Kubeflow Pipelines {tag}" in line
    assert line.endswith(f"fix: compile with --env S3_ENDPOINT=http://{wanted}.kubeflow:9000, "
                         f"then kubectl apply -n kubeflow -f the kfp-launcher.yaml it writes")
  else:
    assert line.endswith(f"(Kubeflow Pipelines {tag})"), line

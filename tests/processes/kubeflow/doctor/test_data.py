"""The data root, listed with the steps' keys at their endpoint: moto's S3
server (tests/fakes/s3_server.py, a process) as the install's store, each
misconfiguration planted in a clean stand-in install."""

from kubeflow.doctor import data
from tests.doctor_install import SECRET, Install, doctor, only, spec
from tests.fakes import s3_profiles, s3_server

WHAT = "the data root s3://mlpipeline/d, listed with the steps' keys"


def test_an_unreadable_or_empty_data_root_fails_and_a_listed_one_is_ok(
    tmp_path, monkeypatch, capsys):
  # The store of a multi-user install: team-a's keys reach only its prefixes.
  with s3_server.s3_server(buckets=["mlpipeline"], profiles=("team-a",)) as (endpoint, client):
    path = spec(tmp_path / "c", namespace=None, endpoint=endpoint)
    with Install(tmp_path, monkeypatch, namespace="kubeflow", spec_path=path) as install:
      install.store.secrets[SECRET] = {"accesskey": s3_server.KEY,
                                       "secretkey": s3_server.SECRET}
      status, found = doctor(capsys, path)
      assert status == 1
      assert only(found, f"FAIL {WHAT}").endswith(
          "expected at least one span's files under it, found none; fix: upload the data "
          "(tfrecords convert writes it) or compile with the --data-root that holds it")
      client.put_object(Bucket="mlpipeline", Key="d/Split-train/span-1/data.tfrecord",
                        Body=b"x")
      status, found = doctor(capsys, path)
      assert status == 0, found
      assert only(found, f"ok  {WHAT}")
      status, found = doctor(capsys, path, "--store-endpoint", "http://127.0.0.1:9")
      assert status == 0, found
      assert "this machine cannot reach http://127.0.0.1:9; reach the store through a " \
             "port-forward" in only(found, f"not checked {WHAT}")
      access, secret = s3_profiles.profile_keys("team-a")
      install.store.secrets[SECRET] = {"accesskey": access, "secretkey": secret}
      status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, f"FAIL {WHAT}")
  assert "expected the steps' keys to list it, found them refused (AccessDenied)" in line


def test_only_an_endpoint_this_machine_may_resolve_is_listed_without_a_port_forward():
  assert data.in_cluster("http://seaweedfs.kubeflow:9000")
  assert data.in_cluster("http://minio-service.kubeflow.svc.cluster.local:9000")
  assert data.in_cluster("http://minio-service:9000")
  assert not data.in_cluster("http://127.0.0.1:9000")
  assert not data.in_cluster("http://localhost:9000")
  assert not data.in_cluster("https://s3.us-east-1.amazonaws.com")

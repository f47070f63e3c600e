"""The data root, listed, and the pipeline root and serving dir, written to
and deleted from, with the steps' keys at their endpoint: moto's S3
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
      for place in ("the pipeline root s3://mlpipeline/p", "the serving dir s3://mlpipeline/"
                    "serving"):
        assert only(found, f"ok  {place}, written to and deleted from with the steps' keys")
      left = client.list_objects_v2(Bucket="mlpipeline").get("Contents", [])
      assert [o["Key"] for o in left] == ["d/Split-train/span-1/data.tfrecord"], left
      status, found = doctor(capsys, path, "--store-endpoint", "http://127.0.0.1:9")
      assert status == 0, found
      assert only(found, "not checked the pipeline root").startswith(
          "not checked the pipeline root, the data root, the serving dir, reached with the "
          "steps' keys: this machine cannot reach http://127.0.0.1:9; pass --store-endpoint "
          "with a URL this machine reaches the store at"), found
      access, secret = s3_profiles.profile_keys("team-a")
      install.store.secrets[SECRET] = {"accesskey": access, "secretkey": secret}
      status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, f"FAIL {WHAT}")
  assert "expected the steps' keys to list it, found them refused (AccessDenied)" in line
  line = only(found, "FAIL the serving dir s3://mlpipeline/serving")
  assert line.endswith("expected the steps' keys to write under it, found them refused "
                       "(AccessDenied); fix: put keys that may write there in the Secret the "
                       "steps name, or compile with a path under the namespace's own prefix")


def test_a_profiles_keys_write_under_its_own_prefixes(tmp_path, monkeypatch, capsys):
  """A multi-user install (2.17): team-a's keys, the run's paths under
  private/team-a/ as compile puts them; the probes write there and leave
  nothing."""
  with s3_server.s3_server(buckets=["mlpipeline"], profiles=("team-a",)) as (endpoint, client):
    path = spec(tmp_path / "c", namespace="team-a", endpoint=endpoint)
    client.put_object(Bucket="mlpipeline", Key="private/team-a/d/Split-train/span-1/x",
                      Body=b"x")
    with Install(tmp_path, monkeypatch, namespace="team-a", spec_path=path) as install:
      access, secret = s3_profiles.profile_keys("team-a")
      install.store.secrets[SECRET] = {"accesskey": access, "secretkey": secret}
      status, found = doctor(capsys, path)
    assert status == 0, found
    written = [x for x in found if "written to and deleted from" in x]
    assert written == [
        "ok  the pipeline root s3://mlpipeline/private/team-a/p, written to and deleted from "
        "with the steps' keys",
        "ok  the serving dir s3://mlpipeline/private/team-a/serving, written to and deleted "
        "from with the steps' keys"], found
    left = client.list_objects_v2(Bucket="mlpipeline").get("Contents", [])
    assert [o["Key"] for o in left] == ["private/team-a/d/Split-train/span-1/x"], left


def test_only_an_endpoint_this_machine_may_resolve_is_listed_without_a_port_forward():
  assert data.in_cluster("http://seaweedfs.kubeflow:9000")
  assert data.in_cluster("http://minio-service.kubeflow.svc.cluster.local:9000")
  assert data.in_cluster("http://minio-service:9000")
  assert not data.in_cluster("http://127.0.0.1:9000")
  assert not data.in_cluster("http://localhost:9000")
  assert not data.in_cluster("https://s3.us-east-1.amazonaws.com")

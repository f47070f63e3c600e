"""The stand-in multi-user store (tests/fakes/s3_profiles.py) answers a
profile namespace's keys as upstream's own namespace isolation check says
the install's store does (kubeflow/pipelines
`test/seaweedfs/namespace_isolation_test.sh`@2.17.0 lines 108-154), and
keeps them to the profile controller's prefixes
(`pipelines-profile-controller/sync.py`@2.17.0 lines 484-487)."""

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.fakes import s3_profiles
from tests.fakes.s3_server import s3_server

OWN, OTHER = "private-artifacts/team-a/test-file.txt", "private-artifacts/team-b/test-file.txt"


@pytest.fixture(scope="module")
def store():
  with s3_server(buckets=("mlpipeline", "data"), profiles=("team-a", "team-b")) as (
      endpoint, admin):
    def client(namespace):
      access, secret = s3_profiles.profile_keys(namespace)
      return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=access, aws_secret_access_key=secret,
                          config=Config(s3={"addressing_style": "path"}))
    team_a, team_b = client("team-a"), client("team-b")
    team_a.put_object(Bucket="mlpipeline", Key=OWN, Body=b"file for test-profile-1")
    team_b.put_object(Bucket="mlpipeline", Key=OTHER, Body=b"file for test-profile-2")
    yield {"a": team_a, "b": team_b, "admin": admin, "endpoint": endpoint}


def allowed(call) -> bool:
  try:
    call()
    return True
  except ClientError as e:
    code = e.response["Error"]["Code"]
    assert code in ("AccessDenied", "403"), f"expected AccessDenied, found {code}"
    return False


def listing(client, **kwargs):
  return lambda: client.list_objects_v2(Bucket="mlpipeline", **kwargs)


# (what upstream's check does, as which namespace, whether it must pass)
CHECKS = {
    "HeadBucket": ("a", lambda c: c.head_bucket(Bucket="mlpipeline"), True),
    "own-namespace download": ("a", lambda c: c.get_object(Bucket="mlpipeline", Key=OWN), True),
    "own-namespace prefix list": (
        "a", lambda c: listing(c, Prefix="private-artifacts/team-a/")(), True),
    "top-level delimited browse": ("b", lambda c: listing(c, Delimiter="/")(), True),
    "cross-namespace download": ("b", lambda c: c.get_object(Bucket="mlpipeline", Key=OWN),
                                 False),
    "cross-namespace copy source": ("b", lambda c: c.copy_object(
        Bucket="mlpipeline", Key="private-artifacts/team-b/stolen.txt",
        CopySource={"Bucket": "mlpipeline", "Key": OWN}), False),
    "cross-namespace delete": ("b", lambda c: c.delete_object(Bucket="mlpipeline", Key=OWN),
                               False),
    "cross-namespace deep prefix list": (
        "b", lambda c: listing(c, Prefix="private-artifacts/team-a/")(), False),
    "flat no-prefix list": ("b", lambda c: listing(c)(), False),
}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_a_namespaces_keys_pass_upstreams_isolation_checks(store, check):
  who, call, expected = CHECKS[check]
  found = allowed(lambda: call(store[who]))
  assert found == expected, (f"{check}: expected {'allowed' if expected else 'denied'}, "
                             f"found {'allowed' if found else 'denied'}")


@pytest.mark.parametrize("key, expected", [
    ("artifacts/x", True), ("shared/x", True), ("private/team-a/data/x", True),
    ("private-artifacts/team-a/tfx/x", True), ("tfx/x", False), ("data/digits/x", False),
    ("private/team-b/x", False), ("private-artifacts/team-ab/x", False)])
def test_the_keys_write_only_under_the_controllers_prefixes(store, key, expected):
  found = allowed(lambda: store["a"].put_object(Bucket="mlpipeline", Key=key, Body=b"x"))
  assert found == expected, f"{key}: expected {'allowed' if expected else 'denied'}, found not"


def test_no_other_bucket_and_a_prefix_without_its_slash_are_reached(store):
  assert not allowed(lambda: store["a"].put_object(Bucket="data", Key="x", Body=b"x"))
  assert not allowed(lambda: store["a"].head_bucket(Bucket="data"))
  # StringLike "private/${aws:username}/*": the namespace's folder needs its slash.
  assert not allowed(listing(store["a"], Prefix="private/team-a"))
  assert allowed(listing(store["a"], Prefix="private/team-a/"))


def test_a_multi_object_delete_is_refused_when_any_key_is_anothers(store):
  a = store["a"]
  a.put_object(Bucket="mlpipeline", Key="private/team-a/gone", Body=b"x")
  assert not allowed(lambda: a.delete_objects(Bucket="mlpipeline", Delete={"Objects": [
      {"Key": "private/team-a/gone"}, {"Key": OTHER}]}))
  assert allowed(lambda: a.delete_objects(Bucket="mlpipeline", Delete={"Objects": [
      {"Key": "private/team-a/gone"}]}))
  assert allowed(lambda: store["admin"].get_object(Bucket="mlpipeline", Key=OTHER)), \
      "expected the OTHER object kept, and the admin's keys to reach it"


def test_keys_the_store_never_issued_are_refused(store):
  stranger = boto3.client("s3", endpoint_url=store["endpoint"], region_name="us-east-1",
                          aws_access_key_id="nobody", aws_secret_access_key="x")
  with pytest.raises(ClientError) as raised:
    stranger.get_object(Bucket="mlpipeline", Key=OWN)
  assert raised.value.response["Error"]["Code"] == "InvalidAccessKeyId", raised.value.response

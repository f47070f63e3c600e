"""The stand-in launcher's OpenBucket (tests/fakes/kfp_launcher_store.py)
against kubeflow/pipelines `backend/src/v2/objectstore/object_store.go` at
2.5.0 (aws-sdk-go v1), 2.15.0 (v2; 2.16.x alike) and 2.17.0."""

import pytest

from tests.fakes.kfp_launcher_store import StoreError, open_bucket

SECRETS = {"s3-creds": {"accesskey": "key", "secretkey": "secret"}}


def session(**params) -> dict:
  base = {"endpoint": "store:9000", "region": "us-east-1", "disableSSL": "true",
          "forcePathStyle": "true", "fromEnv": "false", "secretName": "s3-creds",
          "accessKeyKey": "accesskey", "secretKeyKey": "secretkey"}
  return {"Provider": "s3", "Params": {**base, **params}}


def unreachable(bucket) -> str:
  assert bucket.client is None, "expected a bucket that fails at its first request"
  with pytest.raises(StoreError) as e:
    bucket.objects("x")
  return str(e.value)


def test_the_session_reaches_its_endpoint_by_path_with_the_secrets_keys():
  bucket = open_bucket(session(), "mlpipeline", SECRETS, {}, (2, 5))
  assert bucket.client.meta.endpoint_url == "http://store:9000"
  assert bucket.client._request_signer._credentials.access_key == "key"
  with pytest.raises(StoreError, match=r'^Failed to open bucket "b": Failed to retrieve'):
    open_bucket(session(secretName="gone"), "b", SECRETS, {}, (2, 16))
  with pytest.raises(StoreError, match=r'^Failed to open bucket "b": failed to retrieve'):
    open_bucket(session(secretName="gone"), "b", SECRETS, {}, (2, 17))


@pytest.mark.parametrize("version", [(2, 5), (2, 15), (2, 17)])
def test_an_empty_region_is_the_containers_else_every_request_fails(version):
  """v1 (2.5.0) and v2 (from 2.15.0) both fall back to the environment's
  region; only v2 reads AWS_DEFAULT_REGION."""
  assert "region" in unreachable(open_bucket(session(region=""), "b", SECRETS, {}, version))
  env = {"AWS_REGION": "eu-west-1"}
  assert open_bucket(session(region=""), "b", SECRETS, env, version).client.meta.region_name \
      == "eu-west-1"
  found = open_bucket(session(region=""), "b", SECRETS, {"AWS_DEFAULT_REGION": "eu-west-2"},
                      version)
  assert (found.client is not None) == (version >= (2, 15)), found.unreachable


def test_an_empty_endpoint_is_aws_but_at_215_and_216_a_base_endpoint_without_host():
  """object_store.go@2.15.0 lines 285-296 set BaseEndpoint `https://` for an
  empty endpoint; @2.17.0 line 357 and 2.5.0's v1 leave AWS's."""
  assert "amazonaws.com" in unreachable(open_bucket(session(endpoint=""), "b", SECRETS, {},
                                                    (2, 5)))
  assert "amazonaws.com" in unreachable(open_bucket(session(endpoint=""), "b", SECRETS, {},
                                                    (2, 17)))
  for version in ((2, 15), (2, 16)):
    assert '"http://", no host' in unreachable(
        open_bucket(session(endpoint=""), "b", SECRETS, {}, version))
  # AWS's own endpoint, matched by line 354's pattern, is not set: AWS's.
  assert "amazonaws.com" in unreachable(open_bucket(
      session(endpoint="s3.amazonaws.com"), "b", SECRETS, {}, (2, 15)))


def test_from_env_with_settings_takes_the_containers_keys_at_217_only():
  """HasStructuredS3Settings (@2.17.0 lines 305-315): the endpoint kept, the
  keys the container's; none there is no credentials. Before, AWS's."""
  from_env = session(fromEnv="true", secretName="", accessKeyKey="", secretKeyKey="")
  keys = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
  assert "amazonaws.com" in unreachable(open_bucket(from_env, "b", {}, keys, (2, 16)))
  found = open_bucket(from_env, "b", {}, keys, (2, 17))
  assert found.client._request_signer._credentials.access_key == "k"
  assert "no EC2 IMDS role" in unreachable(open_bucket(from_env, "b", {}, {}, (2, 17)))

"""The stand-in root DAG driver's store session (tests/fakes/
kfp_launcher_providers.py) against upstream's own cases: kubeflow/pipelines
`backend/src/v2/config/env_test.go`@2.17.0 TestGetBucketSessionInfo, on
`config/testdata/provider_cases.yaml`@2.17.0 (its `s3` entries copied
here as upstream writes them, `overrides:` lowercase)."""

import pytest

from tests.fakes.kfp_launcher_providers import DriverPanic, StoreError, session_info

SECRET = {"fromEnv": False, "secretRef": {"secretName": "s", "accessKeyKey": "a",
                                          "secretKeyKey": "k"}}
# provider_cases.yaml@2.17.0 case6's s3 entry, two overrides of five kept.
CASE6 = """
s3:
  default:
    endpoint: s3.amazonaws.com
    region: us-east-1
    disableSSL: false
    forcePathStyle: false
    credentials:
      fromEnv: false
      secretRef:
        secretName: s3-testsecret-6
        accessKeyKey: s3-testaccessKeyKey-6
        secretKeyKey: s3-testsecretKeyKey-6
  overrides:
    - bucketName: s3-bucket
      keyPrefix: some/s3/path/a
      credentials:
        fromEnv: false
        secretRef:
          secretName: s3-test-secret-6-a
          accessKeyKey: s3-test-accessKeyKey-6-a
          secretKeyKey: s3-test-secretKeyKey-6-a
    - bucketName: s3-bucket
      keyPrefix: some/s3/path/b
      endpoint: s3.us-east-2.amazonaws.com
      region: us-east-2
      disableSSL: false
      forcePathStyle: false
      credentials:
        fromEnv: false
        secretRef:
          secretName: s3-test-secret-6-b
          accessKeyKey: s3-test-accessKeyKey-6-b
          secretKeyKey: s3-test-secretKeyKey-6-b
"""
# case7's: a default without credentials.
CASE7 = "s3:\n  default:\n    endpoint: s3-endpoint-7.com\n    region: auto\n  overrides: []\n"


def params(root: str, providers: str = "", version=(2, 17)) -> dict:
  found = session_info({"providers": providers} if providers else {}, root, version)
  assert found["Provider"] == "s3", found
  return found["Params"]


def test_upstreams_own_cases_give_upstreams_sessions():
  assert params("s3://my-bucket") == {"fromEnv": "true"}
  assert params("s3://my-bucket", "nomatch: {}\n") == {"fromEnv": "true"}  # case0
  assert params("s3://s3-bucket/no/override/path", CASE6) == {
      "region": "us-east-1", "endpoint": "s3.amazonaws.com", "disableSSL": "false",
      "fromEnv": "false", "secretName": "s3-testsecret-6", "accessKeyKey":
      "s3-testaccessKeyKey-6", "secretKeyKey": "s3-testsecretKeyKey-6",
      "forcePathStyle": "false", "maxRetries": "5"}
  # "override should match first subpath prefix in pipelineroot"
  assert params("s3://s3-bucket/some/s3/path/b", CASE6) == {
      "region": "us-east-2", "endpoint": "s3.us-east-2.amazonaws.com", "disableSSL": "false",
      "fromEnv": "false", "secretName": "s3-test-secret-6-b", "accessKeyKey":
      "s3-test-accessKeyKey-6-b", "secretKeyKey": "s3-test-secretKeyKey-6-b",
      "forcePathStyle": "false", "maxRetries": "5"}
  # "test order, match first subpath prefix ..., ignoring deeper path prefix"
  assert params("s3://s3-bucket/some/s3/path/a/b", CASE6)["secretName"] == "s3-test-secret-6-a"
  with pytest.raises(StoreError, match="missing default credentials"):
    params("s3://my-bucket", CASE7)
  with pytest.raises(StoreError, match="unsupported Cloud bucket"):
    session_info({}, "unsupported://my-bucket/v2/artifacts")
  with pytest.raises(StoreError, match="unrecognized pipeline root format"):
    session_info({}, "minio.unsupported.format")


def test_a_key_prefix_is_matched_against_the_roots_prefix_with_its_trailing_slash():
  """ParseBucketPathToConfig adds `/` to the root's prefix
  (`objectstore/config.go`@2.17.0 lines 141-144): `tfx/` matches `s3://b/tfx`."""
  text = ("s3:\n  default: {endpoint: e:9000, credentials: {fromEnv: true}}\n"
          "  Overrides: [{bucketName: b, keyPrefix: tfx/, endpoint: o:9000, "
          "credentials: {fromEnv: true}}]\n")
  assert params("s3://b/tfx", text)["endpoint"] == "o:9000"
  assert params("s3://b/tfx2", text)["endpoint"] == "e:9000"


def test_field_names_match_in_any_case_and_a_wrong_type_fails_the_driver():
  """sigs.k8s.io/yaml, then encoding/json: case-insensitive names, typed values."""
  text = "S3:\n  Default:\n    ENDPOINT: e:9000\n    credentials: {FromEnv: true}\n"
  assert params("s3://b/r", text)["endpoint"] == "e:9000"
  quoted = "s3:\n  default:\n    disableSSL: 'true'\n    credentials: {fromEnv: true}\n"
  with pytest.raises(StoreError, match=r"cannot unmarshal string into Go struct field "
                     r"S3ProviderDefault\.s3\.default\.disableSSL of type bool"):
    params("s3://b/r", quoted)
  with pytest.raises(StoreError, match="error converting YAML to JSON"):
    params("s3://b/r", "s3: [")


def test_a_default_without_a_secret_ref_panics_and_an_override_without_one_is_refused():
  """s3.go@2.17.0 line 124 dereferences the default's nil SecretRef; an
  override's is checked (lines 158-160), even in `credentials: {}`."""
  with pytest.raises(DriverPanic, match="nil pointer dereference"):
    params("s3://b/r", "s3:\n  default:\n    credentials: {}\n")
  text = ("s3:\n  default: {credentials: {fromEnv: true}}\n"
          "  overrides: [{bucketName: b, credentials: {}}]\n")
  with pytest.raises(StoreError, match="missing override secretref$"):
    params("s3://b/r", text)


def test_max_retries_from_215_and_an_overrides_copies_the_defaults():
  """s3.go@2.15.0 lines 116-120 (absent at 2.5.0); line 151 copies the
  default's value for an override's, and panics when it has none."""
  plain = "s3:\n  default: {credentials: {fromEnv: true}}\n"
  assert "maxRetries" not in params("s3://b/r", plain, (2, 5))
  assert params("s3://b/r", plain, (2, 15))["maxRetries"] == "5"
  override = "  overrides: [{bucketName: b, maxRetries: 7, credentials: {fromEnv: true}}]\n"
  with pytest.raises(DriverPanic, match="line 151"):
    params("s3://b/r", plain + override, (2, 16))
  three = "s3:\n  default: {maxRetries: 3, credentials: {fromEnv: true}}\n" + override
  assert params("s3://b/r", three)["maxRetries"] == "3"


def test_the_providers_are_read_for_every_root_and_a_local_root_fails_the_driver():
  bad = {"providers": "s3: {default: {region: 1}}\n"}
  with pytest.raises(StoreError, match="of type string"):
    session_info(bad, "minio://mlpipeline/v2/artifacts")
  with pytest.raises(StoreError, match='unrecognized pipeline root format: "/tmp/root"'):
    session_info({}, "/tmp/root")
  assert session_info({}, "gs://b/r") == {"Provider": "gs", "Params": {}}

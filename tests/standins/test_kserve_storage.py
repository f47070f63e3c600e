"""tests/fakes/kserve_storage.py gives the storage initializer what KServe
v0.15.2's and v0.20.0's credential builder give it (each rule cited in the
module's docstring): the predictor's account, `default` when none; the S3
Secrets it lists; the endpoint, HTTPS, region and SSL verification from
the Secret's annotations, v0.20.0 also from its data (and the endpoint's
own scheme)."""

import pytest

from tests.fakes import kserve, kserve_storage, kubernetes_api
from tests.fakes.kserve_storage import ENDPOINT, USE_HTTPS, initializer_env

NS = "team-a"
KEYS = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}


def _store(annotations=None, data=None, account="s3-reader") -> kubernetes_api.Store:
  store = kubernetes_api.Store({kserve.PLURAL})
  store.create(("v1", NS, "secrets", "creds"), {
      "metadata": {"annotations": annotations or {}},
      "stringData": {**KEYS, **(data or {})}})
  store.create(("v1", NS, "serviceaccounts", account), {"secrets": [{"name": "creds"}]})
  return store


@pytest.mark.parametrize("version", ["0.15", "0.20"])
def test_the_account_the_predictor_names_or_default(version):
  store = _store({ENDPOINT: "minio.kubeflow:9000", USE_HTTPS: "0"})
  assert initializer_env(store, NS, "s3-reader", version) == {
      **KEYS, "S3_ENDPOINT": "minio.kubeflow:9000",
      "AWS_ENDPOINT_URL": "http://minio.kubeflow:9000"}
  assert initializer_env(store, NS, "", version) == {}  # `default`: not there
  assert initializer_env(_store(account="default"), NS, "", version) == KEYS  # AWS itself


@pytest.mark.parametrize("version", ["0.15", "0.20"])
def test_https_unless_s3_usehttps_is_0(version):
  env = initializer_env(_store({ENDPOINT: "minio.kubeflow:9000"}), NS, "s3-reader", version)
  assert env["AWS_ENDPOINT_URL"] == "https://minio.kubeflow:9000"


def test_v0_20_reads_the_secrets_data_and_the_endpoints_scheme_v0_15_only_annotations():
  data = {"S3_ENDPOINT": "minio.kubeflow:9000", "S3_USE_HTTPS": "0"}
  assert initializer_env(_store(data=data), NS, "s3-reader", "0.20")[
      "AWS_ENDPOINT_URL"] == "http://minio.kubeflow:9000"
  assert "AWS_ENDPOINT_URL" not in initializer_env(_store(data=data), NS, "s3-reader", "0.15")
  scheme = {ENDPOINT: "http://minio.kubeflow:9000"}
  assert initializer_env(_store(scheme), NS, "s3-reader", "0.20")[
      "AWS_ENDPOINT_URL"] == "http://minio.kubeflow:9000"
  assert initializer_env(_store(scheme), NS, "s3-reader", "0.15")[
      "AWS_ENDPOINT_URL"] == "https://http://minio.kubeflow:9000"


def test_v0_20_takes_the_region_and_verify_ssl_from_the_secrets_data_too():
  """The annotation first, else (v0.20.0 only) the Secret's key of the
  variable's own name."""
  data = {"AWS_DEFAULT_REGION": "eu-west-1", "S3_VERIFY_SSL": "0"}
  env = initializer_env(_store(data=data), NS, "s3-reader", "0.20")
  assert (env["AWS_DEFAULT_REGION"], env["S3_VERIFY_SSL"]) == ("eu-west-1", "0"), env
  env = initializer_env(_store(data=data), NS, "s3-reader", "0.15")
  assert "AWS_DEFAULT_REGION" not in env and "S3_VERIFY_SSL" not in env, env
  annotated = _store({kserve_storage.REGION: "us-east-2"}, data)
  assert initializer_env(annotated, NS, "s3-reader", "0.20")["AWS_DEFAULT_REGION"] == "us-east-2"


@pytest.mark.parametrize("version", ["0.15", "0.20"])
def test_an_empty_value_of_a_later_secret_keeps_the_earlier_ones(version):
  """KServe sets a variable only from a value that is not empty."""
  store = _store({kserve_storage.REGION: "eu-west-1", kserve_storage.VERIFY_SSL: "0"})
  store.create(("v1", NS, "secrets", "more"), {
      "metadata": {"annotations": {kserve_storage.REGION: "", kserve_storage.VERIFY_SSL: ""}},
      "stringData": KEYS})
  store.update(("v1", NS, "serviceaccounts", "s3-reader"),
               lambda account: account["secrets"].append({"name": "more"}))
  env = initializer_env(store, NS, "s3-reader", version)
  assert (env["AWS_DEFAULT_REGION"], env["S3_VERIFY_SSL"]) == ("eu-west-1", "0"), env


def test_v0_15_takes_an_empty_endpoint_annotation_and_v0_20_does_not():
  store = _store({ENDPOINT: ""})
  assert initializer_env(store, NS, "s3-reader", "0.15")["AWS_ENDPOINT_URL"] == "https://"
  assert "AWS_ENDPOINT_URL" not in initializer_env(store, NS, "s3-reader", "0.20")


def test_a_listed_secret_that_is_missing_fails_and_no_endpoint_goes_to_aws():
  store = kubernetes_api.Store({kserve.PLURAL})
  store.create(("v1", NS, "serviceaccounts", "s3-reader"), {"secrets": [{"name": "gone"}]})
  with pytest.raises(kserve_storage.InitializerFailed, match='secrets "gone" not found'):
    initializer_env(store, NS, "s3-reader", "0.20")
  with pytest.raises(kserve_storage.InitializerFailed, match=r"EndpointConnectionError: Could "
                     r'not connect to the endpoint URL: "https://models.s3.amazonaws.com/'):
    kserve_storage.downloaded("s3://models/digits/kserve/1/", KEYS)
  with pytest.raises(kserve_storage.InitializerFailed, match="Unable to locate credentials"):
    kserve_storage.downloaded("s3://models/digits/kserve/1/",
                              {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})

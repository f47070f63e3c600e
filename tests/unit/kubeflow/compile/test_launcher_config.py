"""The `kfp-launcher` ConfigMap compile writes for an S3-compatible store
(kubeflow/compile/launcher_config.py), against upstream's schema."""

import pytest
import yaml

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile import launcher_config
from kubeflow.errors import CompileError
from tests.fakes import kfp_launcher_providers, kfp_launcher_store

SECRETS = [("mlpipeline-minio-artifact", "accesskey", "AWS_ACCESS_KEY_ID"),
           ("mlpipeline-minio-artifact", "secretkey", "AWS_SECRET_ACCESS_KEY")]
# The json tags of S3ProviderDefault, S3Credentials and S3SecretRef
# (kubeflow/pipelines backend/src/v2/config/s3.go@2.5.0 lines 30-65; 2.17.0
# adds only `maxRetries`, lines 31-70): a key spelt otherwise is ignored.
DEFAULT_KEYS = {"endpoint", "credentials", "region", "disableSSL", "forcePathStyle"}
SECRET_REF_KEYS = {"secretName", "accessKeyKey", "secretKeyKey"}


def providers(config) -> dict:
  return yaml.safe_load(config["data"]["providers"])


@pytest.mark.parametrize("endpoint, version", [
    ("http://minio-service.kubeflow:9000", "2.5 to 2.15"),
    ("http://seaweedfs.kubeflow:9000", "2.16 and later")])
def test_an_in_cluster_store_gets_the_launchers_providers_in_upstreams_schema(endpoint, version):
  config = launcher_config.configmap(
      "s3://mlpipeline/tfx", {"S3_ENDPOINT": endpoint, "AWS_REGION": "us-east-1"}, SECRETS)
  assert config["kind"] == "ConfigMap" and config["metadata"] == {"name": "kfp-launcher"}
  assert config["data"]["defaultPipelineRoot"] == "s3://mlpipeline/tfx"
  default = providers(config)["s3"]["default"]
  assert set(default) == DEFAULT_KEYS, version
  assert default["endpoint"] == endpoint[len("http://"):]
  assert default["disableSSL"] is True and default["forcePathStyle"] is True
  assert default["region"] == "us-east-1"
  assert default["credentials"]["fromEnv"] is False
  assert default["credentials"]["secretRef"] == {
      "secretName": "mlpipeline-minio-artifact", "accessKeyKey": "accesskey",
      "secretKeyKey": "secretkey"}
  assert set(default["credentials"]["secretRef"]) == SECRET_REF_KEYS


def test_https_keeps_ssl_and_a_scheme_less_endpoint_follows_s3_use_https():
  secure = providers(launcher_config.configmap(
      "s3://b/r", {"S3_ENDPOINT": "https://s3.example.com"}, SECRETS))["s3"]["default"]
  assert secure["disableSSL"] is False and secure["endpoint"] == "s3.example.com"
  assert secure["region"] == launcher_config.DEFAULT_REGION
  plain = providers(launcher_config.configmap(
      "s3://b/r", {"S3_ENDPOINT": "store:9000", "S3_USE_HTTPS": "0"}, SECRETS))["s3"]["default"]
  assert plain["disableSSL"] is True and plain["endpoint"] == "store:9000"


def test_an_empty_aws_region_still_gives_the_launcher_a_region():
  """An empty `region` leaves the launcher only the container's AWS_REGION,
  here empty too (object_store.go@2.5.0 line 259, @2.17.0 lines 332-334)."""
  env = {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000", "AWS_REGION": ""}
  config = launcher_config.configmap("s3://mlpipeline/tfx", env, SECRETS)
  assert providers(config)["s3"]["default"]["region"] == launcher_config.DEFAULT_REGION


@pytest.mark.parametrize("version", [(2, 5), (2, 15), (2, 16, 1), (2, 17)])
def test_the_stand_in_launcher_opens_the_store_by_path_from_the_configmap(version):
  """The file as the stand-in driver and launcher read it, at each SDK and
  session rule (tests/fakes/kfp_launcher_providers.py, kfp_launcher_store.py):
  the endpoint by path, over plain HTTP, with the secret's keys, even in a
  container that sets no region."""
  env = {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000", "AWS_REGION": ""}
  config = launcher_config.configmap("s3://mlpipeline/tfx", env, SECRETS)
  session = kfp_launcher_providers.session_info(config["data"], "s3://mlpipeline/tfx", version)
  bucket = kfp_launcher_store.open_bucket(
      session, "mlpipeline", {"mlpipeline-minio-artifact": {"accesskey": "k", "secretkey": "s"}},
      {"AWS_REGION": ""}, version)
  assert bucket.client is not None, bucket.unreachable
  assert bucket.client.meta.endpoint_url == "http://seaweedfs.kubeflow:9000"
  assert bucket.client.meta.region_name == launcher_config.DEFAULT_REGION


@pytest.mark.parametrize("root, env", [
    ("s3://bucket/root", {}),  # AWS: the launcher's defaults reach it
    ("gs://bucket/root", {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000"}),
    ("gs://bucket/root", {})])
def test_aws_and_gcs_need_no_configmap_and_nothing_is_written(root, env, tmp_path):
  assert launcher_config.configmap(root, env, SECRETS) is None
  assert launcher_config.write(str(tmp_path), None) is None
  assert not list(tmp_path.iterdir())


def test_keys_from_two_secrets_or_none_are_refused_in_one_line():
  env = {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000"}
  with pytest.raises(CompileError, match="found none$"):
    launcher_config.configmap("s3://b/r", env, [])
  split = [SECRETS[0], ("other", "secretkey", "AWS_SECRET_ACCESS_KEY")]
  with pytest.raises(CompileError, match="naming the same secret"):
    launcher_config.configmap("s3://b/r", env, split)


def test_the_file_is_written_beside_the_spec_and_the_line_says_how_to_apply_it(tmp_path):
  config = launcher_config.configmap(
      "s3://mlpipeline/tfx", {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000"}, SECRETS)
  line = launcher_config.write(str(tmp_path), config)
  path = tmp_path / "kfp-launcher.yaml"
  assert yaml.safe_load(path.read_text()) == config
  assert line.startswith(f"the launcher's store: kubectl apply -n kubeflow -f {path} "), line
  assert "\n" not in line


def test_compile_refuses_an_s3_store_without_its_secret_before_compiling(capsys):
  code = kubeflow(["compile", "--image", "r/i:1", "--pipeline-root", "s3://mlpipeline/tfx",
                   "--output-dir", "/nonexistent/out", "--skip-data-check",
                   "--env", "S3_ENDPOINT=http://seaweedfs.kubeflow:9000"])
  err = capsys.readouterr().err.strip().splitlines()
  assert code == 2 and "AWS_SECRET_ACCESS_KEY" in err[-1] and "found none" in err[-1], err


def test_a_profile_namespaces_own_keys_bind_its_paths_and_the_file_is_for_it(tmp_path):
  """`--namespace NS` with the keys of the Secret the profile controller
  writes into NS: the steps hold to NS's prefixes (kubeflow/profile_paths.py);
  anything else is a single-user install's, or keys the user brought."""
  assert launcher_config.profile_namespace("team-a", SECRETS) == "team-a"
  assert launcher_config.profile_namespace(None, SECRETS) is None
  assert launcher_config.profile_namespace("kubeflow", SECRETS) is None
  own = [("team-a-store", key, var) for _, key, var in SECRETS]
  assert launcher_config.profile_namespace("team-a", own) is None
  config = launcher_config.configmap(
      "s3://mlpipeline/private/team-a/tfx",
      {"S3_ENDPOINT": "http://seaweedfs.kubeflow:9000"}, SECRETS)
  line = launcher_config.write(str(tmp_path), config, "team-a")
  assert line == f"the launcher's store: kubectl apply -n team-a -f {tmp_path / 'kfp-launcher.yaml'}"

"""serving/kserve.py without a bucket: the InferenceService it sends, and what
is refused before or by the cluster, in one line: a serving dir on this
machine's disk (KServe's storage initializer cannot download it), a bad
name, a Standard-mode canary; and, through the stand-in API with KServe
v0.20.0's CRD and webhooks (tests/fakes/kserve.py), two implementations in
one predictor and an unknown field. Deploying versions on s3://:
tests/processes/serving/test_kserve.py."""

import pytest

import serving
from runtime import kube
from serving import kserve
from tests.conftest import model_dir
from tests.fakes import kserve as fake
from tests.fakes import kserve_storage

NAMESPACE = "team-a"


def test_the_inference_service_names_one_staged_version_and_tf_serving():
  target = kserve.Target("digits", canary_percent=10, service_account="s3-reader")
  sent = kserve.body(target, NAMESPACE, "s3://b/digits/serving/kserve/17/")
  predictor = sent["spec"]["predictor"]
  assert predictor == {"model": {
      "modelFormat": {"name": "tensorflow", "version": "2"},
      "runtime": "kserve-tensorflow-serving", "image": "tensorflow/serving:2.16.1",
      "storageUri": "s3://b/digits/serving/kserve/17/"},
      "serviceAccountName": "s3-reader"}  # created: no canary, none serves yet
  # The name every KServe from v0.15 to v0.20 takes to Knative mode (kserve_modes.py).
  assert sent["metadata"]["annotations"] == {"serving.kserve.io/deploymentMode": "Serverless"}
  assert kserve.served_version(sent) == "17"


def test_a_serving_dir_on_this_machine_is_refused(tmp_path):
  base = str(tmp_path / "serving")
  version = serving.push(model_dir(str(tmp_path / "m1")), base).rsplit("/", 1)[-1]
  with pytest.raises(serving.ServingError, match=r"KServe downloads a model from s3:// or "
                     r"gs://, not from a folder of this machine"):
    kserve.stage(base, version)
  # What the storage initializer would have found there: nothing.
  assert not kserve_storage.serves(base + "/kserve/" + version + "/")


@pytest.mark.parametrize("args, message", [
    (dict(name="Digits_1"), "--kserve: expected an InferenceService name of at most 45"),
    (dict(name="d" * 46), "--kserve: expected an InferenceService name of at most 45"),
    (dict(name="digits", mode="raw"), "--kserve-mode: expected one of knative, standard"),
    (dict(name="digits", canary_percent=100), "--kserve-canary-percent: expected 0 (no "
                                              "canary) to 99, found 100"),
    (dict(name="digits", mode="standard", canary_percent=10),
     "--kserve-canary-percent: a canary needs --kserve-mode knative"),
])
def test_a_target_kserve_would_not_serve_is_refused(args, message):
  with pytest.raises(ValueError) as refused:
    kserve.Target(**args)
  assert str(refused.value).startswith(message), str(refused.value)


def test_the_webhook_and_the_crd_refuse_in_their_words(tmp_path, monkeypatch):
  with fake.standin(str(tmp_path), NAMESPACE) as (_, config):
    monkeypatch.setenv("KUBECONFIG", config)
    body = kserve.body(kserve.Target("digits"), NAMESPACE, "s3://b/m/kserve/1/")
    body["spec"]["predictor"]["sklearn"] = {"storageUri": "s3://b/x/"}
    cluster = kube.Cluster(kserve.GRANTS)
    with pytest.raises(kube.ClusterError) as refused:
      kube.create(cluster, "serving.kserve.io", "v1beta1", "inferenceservices", body)
    assert str(refused.value).startswith(
        "create inferenceservices.serving.kserve.io digits: refused by the cluster (admission "
        'webhook "inferenceservice.kserve-webhook-server.validator" denied the request: '
        "exactly one of [Name, SKLearn"), str(refused.value)
    body["spec"]["predictor"].pop("sklearn")
    body["spec"]["predictor"]["canaryTrafficPercnt"] = 10  # a typo the CRD does not know
    with pytest.raises(kube.ClusterError, match=r'strict decoding error: unknown field '
                       r'"spec.predictor.canaryTrafficPercnt"'):
      kube.create(cluster, "serving.kserve.io", "v1beta1", "inferenceservices", body)


def test_a_pipeline_with_kserve_needs_its_serving_dir_in_a_bucket():
  """Refused when the run is configured, not after training."""
  from dataset import declaration
  from dataset.training import ConfigError
  from pipeline.config import PipelineConfig
  from tests.conftest import DIGITS_YAML
  decl = declaration.load(DIGITS_YAML)
  with pytest.raises(ConfigError, match=r"'serving_dir \(--serving-dir\)': expected a bucket "
                     r"\(s3:// or gs://\) with --kserve"):
    PipelineConfig("digits", "/r", "/local/serving", decl, kserve=kserve.Target("digits"))
  PipelineConfig("digits", "/r", "s3://b/serving", decl, kserve=kserve.Target("digits"))

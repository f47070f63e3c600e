"""Deploying serving-dir versions on KServe (serving/kserve.py), through the
real `kubernetes` client, against the stand-in API server with KServe
v0.20.0's CRD schema, webhooks and Knative-mode controller
(tests/fakes/kserve.py): a first version created, a second as a canary at
its percent, promoted; a third rolled back to the second's copy with its
traffic back at once; a forbidden call, a mode change and a Standard-mode
canary refused in one line; a staged URI that downloads one version, on s3
too."""

import os

import pytest

import serving
from runtime import kube
from serving import history, kserve
from tests.conftest import model_dir
from tests.fakes import kserve as fake

NAMESPACE = "team-a"


@pytest.fixture
def cluster(tmp_path, monkeypatch):
  with fake.standin(str(tmp_path), NAMESPACE) as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    yield store


def push(serving_dir: str, folder) -> str:
  return os.path.basename(serving.push(model_dir(str(folder)), serving_dir))


def isvc(store) -> dict:
  return fake.reconciled(store, NAMESPACE, "digits")


def traffic(store) -> list:
  return fake.traffic(store, NAMESPACE, "digits")


def test_a_version_then_a_canary_promoted_then_a_rollback(tmp_path, cluster):
  store = cluster
  base = str(tmp_path / "serving")
  first = push(base, tmp_path / "m1")
  deploy = kserve.KServe(kserve.Target("digits", canary_percent=10))
  assert deploy.deploy(base, first) == (
      f"kserve: created InferenceService digits serving version {first} (Knative mode)")
  obj = isvc(store)
  model = obj["spec"]["predictor"]["model"]
  assert model["storageUri"] == f"{base}/kserve/{first}/"
  assert (model["modelFormat"], model["runtime"]) == (
      {"name": "tensorflow", "version": "2"}, "kserve-tensorflow-serving")
  assert obj["metadata"]["annotations"]["modelFormat"] == "tensorflow"  # the defaulter's
  # What KServe downloads holds one numbered version: TF Serving serves it.
  assert fake.downloaded(model["storageUri"]) == [f"{first}/saved_model.pb"]
  assert [c["status"] for c in obj["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
  assert traffic(store) == [(100, first)]
  assert deploy.deploy(base, first).endswith(f"already serves version {first}")  # a retry

  second = push(base, tmp_path / "m2")
  assert deploy.deploy(base, second) == (
      f"kserve: version {second} is a canary at 10% of traffic; version {first} keeps 90% "
      "until `promote` or `rollback`")
  assert traffic(store) == [(10, second), (90, first)]
  assert deploy.promote() == f"kserve: version {second} promoted to all traffic"
  assert traffic(store) == [(100, second)]
  component = isvc(store)["status"]["components"]["predictor"]
  assert component["previousRolledoutRevision"] == "digits-predictor-00001", component

  third = push(base, tmp_path / "m3")
  deploy.deploy(base, third)
  assert traffic(store) == [(10, third), (90, second)]
  # The serving dir's rollback: a copy of the second pushed as the newest;
  # then the InferenceService names it, at 0%: the second's revision keeps
  # all the traffic, at once.
  copy = os.path.basename(serving.latest(base)) if history.rollback_lines(base, second) else ""
  assert copy not in (first, second, third)
  assert deploy.roll_back(base, copy).startswith(f"kserve: canary version {third} rolled back")
  assert traffic(store) == [(0, copy), (100, second)]
  assert isvc(store)["metadata"]["annotations"][kserve.VERSION_ANNOTATION] == copy
  assert deploy.status_lines()[0].startswith(f"InferenceService digits: version {copy}, "
                                             "Ready True, http://digits.team-a.example.com")


def test_refusals_are_one_line(tmp_path, cluster):
  store = cluster
  base = str(tmp_path / "serving")
  first = push(base, tmp_path / "m1")
  store.forbid("create", "inferenceservices")
  with pytest.raises(kube.ClusterError) as refused:
    kserve.KServe(kserve.Target("digits")).deploy(base, first)
  line = str(refused.value)
  assert line.startswith("create inferenceservices.serving.kserve.io digits: forbidden in "
                         "namespace team-a (") and "\n" not in line, line
  assert "kubectl apply -n team-a -f kubeflow/manifests/kserve-rbac.yaml" in line, line
  store.forbidden.clear()

  kserve.KServe(kserve.Target("digits")).deploy(base, first)
  second = push(base, tmp_path / "m2")
  with pytest.raises(kube.ClusterError, match=r"InferenceService digits runs in Knative "
                     r"mode, asked for Standard: KServe refuses to change it"):
    kserve.KServe(kserve.Target("digits", mode="standard")).deploy(base, second)
  with pytest.raises(ValueError, match=r"--kserve-canary-percent: a canary needs "
                     r"--kserve-mode knative"):
    kserve.Target("digits", mode="standard", canary_percent=10)
  with pytest.raises(ValueError, match=r"--kserve: expected an InferenceService name"):
    kserve.Target("Digits_1")
  with pytest.raises(serving.ServingError, match="no version 123 in"):
    kserve.KServe(kserve.Target("digits")).deploy(base, "123")


def test_the_webhook_refuses_what_kserve_refuses(cluster):
  """The stand-in's rules, in KServe's words, through the API: one line."""
  body = kserve.body(kserve.Target("digits"), NAMESPACE, "s3://b/m/kserve/1/", "1")
  body["spec"]["predictor"]["sklearn"] = {"storageUri": "s3://b/x/"}
  with pytest.raises(kube.ClusterError) as refused:
    kube.create(kube.Cluster(kserve.GRANTS), "serving.kserve.io", "v1beta1",
                "inferenceservices", body)
  assert str(refused.value).startswith(
      "create inferenceservices.serving.kserve.io digits: refused by the cluster (admission "
      'webhook "inferenceservice.kserve-webhook-server.validator" denied the request: '
      "exactly one of [Name, SKLearn"), str(refused.value)
  body["spec"]["predictor"].pop("sklearn")
  body["spec"]["predictor"]["canaryTrafficPercnt"] = 10  # a typo: the CRD does not know it
  with pytest.raises(kube.ClusterError, match=r'strict decoding error: unknown field '
                     r'"spec.predictor.canaryTrafficPercnt"'):
    kube.create(kube.Cluster(kserve.GRANTS), "serving.kserve.io", "v1beta1",
                "inferenceservices", body)


@pytest.mark.parametrize("install", ["kserve-rbac.yaml", "kserve-rbac-kubeflow-edit.yaml"])
def test_a_profiles_default_editor_deploys_with_the_shipped_manifests(tmp_path, monkeypatch,
                                                                      install):
  """With the stand-in authorizing as Kubernetes' RBAC does (tests/fakes/rbac.py):
  every call of a deploy, a canary, a promotion and a rollback is granted."""
  import yaml

  from tests.conftest import REPO
  from tests.fakes import kubernetes_api, rbac
  with fake.standin(str(tmp_path), NAMESPACE) as (store, _):
    store.rbac = True
    rbac.profile(store, NAMESPACE)
    with open(os.path.join(REPO, "kubeflow", "manifests", install)) as f:
      rbac.apply(store, [d for d in yaml.safe_load_all(f) if d], NAMESPACE)
    server = kubernetes_api.serve(store)
    try:
      (tmp_path / "editor").write_text(
          kubernetes_api.kubeconfig(server, NAMESPACE, account="default-editor"))
      monkeypatch.setenv("KUBECONFIG", str(tmp_path / "editor"))
      base = str(tmp_path / "serving")
      deploy = kserve.KServe(kserve.Target("digits", canary_percent=10))
      deploy.deploy(base, push(base, tmp_path / "m1"))
      deploy.deploy(base, push(base, tmp_path / "m2"))
      deploy.promote()
      deploy.deploy(base, push(base, tmp_path / "m3"))
      history.rollback_lines(base, None)
      deploy.roll_back(base, os.path.basename(serving.latest(base)))
      assert deploy.status_lines()
    finally:
      server.shutdown()

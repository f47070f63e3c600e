"""Deploying serving-dir versions on KServe (serving/kserve.py), with the
serving dir on s3:// (moto's S3 server, a process: tests/processes/conftest.py), through the real
`kubernetes` client, against the stand-in API server with KServe v0.20.0's
CRD, webhooks and Knative-mode controller (tests/fakes/kserve.py), and with
v0.15.2's CRD and mode rules, what Kubeflow's platform installs:
- a first version created; a second as a canary at its percent, promoted
  without a new revision; a third rolled back to the second's copy, its
  traffic back at once; on both releases, the mode each records kept;
- on v0.15.2, an InferenceService an older deploy created with `Knative`
  (recorded `Serverless`) takes the next version;
- a forbidden call and a change of mode refused in one line; a profile's
  `default-editor` granted every call by the shipped manifests;
- the staged URI downloads exactly one numbered version, as kserve-storage
  lists an S3 prefix (unanchored: without its final "/" a sibling comes too)."""

import os

import pytest
import yaml

import serving
from runtime import kube
from serving import kserve, kserve_rollback
from tests.conftest import REPO, model_dir
from tests.fakes import kserve as fake
from tests.fakes import kserve_storage, kubernetes_api, rbac
from tests.fakes.s3_server import upload_folder

NAMESPACE = "team-a"
PLURAL = "inferenceservices"
ACCOUNT = "s3-reader"  # kserve_storage.add_s3_account


RELEASES = ["0.15", "0.20"]  # tests/fakes/kserve_versions.py
RECORDED = {"0.15": "Serverless", "0.20": "Knative"}  # what each calls Knative mode


@pytest.fixture
def cluster(tmp_path, monkeypatch, s3, request):
  version = getattr(request, "param", "0.20")
  with fake.standin(str(tmp_path), NAMESPACE, version) as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    kserve_storage.add_s3_account(store, NAMESPACE, s3[0])
    yield store


def serving_dir(tmp_path) -> str:
  return f"s3://models/{tmp_path.name}/serving"


def push(base: str, folder) -> str:
  return os.path.basename(serving.push(model_dir(str(folder)), base))


def traffic(store) -> list:
  return fake.traffic(store, NAMESPACE, "digits")


@pytest.mark.parametrize("cluster", RELEASES, indirect=True)
def test_a_version_then_a_canary_promoted_then_a_rollback(tmp_path, cluster):
  store, base = cluster, serving_dir(tmp_path)
  recorded = RECORDED[store.kserve_version]
  first = push(base, tmp_path / "m1")
  deploy = kserve.KServe(kserve.Target("digits", canary_percent=10, service_account=ACCOUNT))
  assert deploy.deploy(base, first) == (
      f"kserve: created InferenceService digits: serves version {first} (100%, Knative mode)")
  obj = fake.reconciled(store, NAMESPACE, "digits")
  uri = obj["spec"]["predictor"]["model"]["storageUri"]
  assert uri == f"{base}/kserve/{first}/" and kserve_storage.downloaded(uri) == [f"{first}/saved_model.pb"]
  assert obj["metadata"]["annotations"]["modelFormat"] == "tensorflow"  # the defaulter's
  assert [c["status"] for c in obj["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
  assert obj["status"]["deploymentMode"] == recorded
  assert traffic(store) == [(100, first)]
  assert deploy.deploy(base, first) == (  # a retry
      f"kserve: InferenceService digits already serves version {first} (100%)")

  second = push(base, tmp_path / "m2")
  assert deploy.deploy(base, second) == (
      f"kserve: version {second} is a canary at 10% of traffic; version {first} keeps 90% "
      "until `promote` or `rollback`")
  assert traffic(store) == [(10, second), (90, first)]
  # At 10%, it does not "already serve": the status says its share.
  assert deploy.deploy(base, second).startswith(f"kserve: version {second} is a canary at 10%")
  assert deploy.promote() == f"kserve: version {second} promoted to all traffic"
  assert traffic(store) == [(100, second)]
  component = fake.reconciled(store, NAMESPACE, "digits")["status"]["components"]["predictor"]
  # No new revision for a promotion: the canary's own takes the traffic.
  assert (component["latestRolledoutRevision"], component["previousRolledoutRevision"]) == (
      "digits-predictor-00002", "digits-predictor-00001"), component

  third = push(base, tmp_path / "m3")
  deploy.deploy(base, third)
  assert traffic(store) == [(10, third), (90, second)]
  # The serving dir's rollback: a copy of the second pushed as the newest;
  # the InferenceService names it at 0%: the second's revision keeps all
  # the traffic, at once.
  assert kserve_rollback.roll_back("digits", base, second)[-1].startswith(
      f"kserve: canary version {third} rolled back")
  copy = os.path.basename(serving.latest(base))
  assert copy not in (first, second, third)
  assert traffic(store) == [(0, copy), (100, second)]
  assert deploy.deploy(base, copy) == (  # at 0%: not "already serves"
      f"kserve: InferenceService digits names version {copy} at 0% of traffic; version "
      f"{second} keeps 100%")
  assert kserve.served_version(fake.reconciled(store, NAMESPACE, "digits")) == copy
  # The next canary splits with the version that kept the traffic.
  fourth = push(base, tmp_path / "m4")
  assert f"version {second} keeps 90%" in deploy.deploy(base, fourth)
  obj = fake.reconciled(store, NAMESPACE, "digits")
  # Written `Serverless`, which v0.20.0's defaulter rewrites to `Knative`.
  assert (obj["metadata"]["annotations"][fake.MODE],
          obj["status"]["deploymentMode"]) == (recorded, recorded)


@pytest.mark.parametrize("cluster", ["0.15"], indirect=True)
def test_an_older_deploys_knative_annotation_on_v0_15_takes_the_next_version(tmp_path, cluster):
  """Before kserve_modes.py, a create wrote `Knative`: v0.15.2 ran and
  recorded its default, `Serverless`, and refused every later update."""
  store, base = cluster, serving_dir(tmp_path)
  first = push(base, tmp_path / "m1")
  body = kserve.body(kserve.Target("digits", service_account=ACCOUNT), NAMESPACE, kserve.stage(base, first))
  body["metadata"]["annotations"][fake.MODE] = "Knative"
  kube.create(kube.Cluster(kserve.GRANTS), "serving.kserve.io", "v1beta1", PLURAL, body)
  assert fake.reconciled(store, NAMESPACE, "digits")["status"]["deploymentMode"] == "Serverless"
  deploy = kserve.KServe(kserve.Target("digits", canary_percent=10, service_account=ACCOUNT))
  second = push(base, tmp_path / "m2")
  assert f"version {first} keeps 90%" in deploy.deploy(base, second)
  assert traffic(store) == [(10, second), (90, first)]
  obj = fake.reconciled(store, NAMESPACE, "digits")
  assert obj["metadata"]["annotations"][fake.MODE] == "Serverless"
  assert deploy.promote() == f"kserve: version {second} promoted to all traffic"
  assert traffic(store) == [(100, second)]


@pytest.mark.parametrize("cluster", ["0.15"], indirect=True)
def test_an_older_deploys_knative_annotation_on_v0_15_rolls_back_without_a_deploy(
    tmp_path, cluster):
  """The rollback's patch writes the recorded mode back too: without it,
  v0.15.2's webhook refused it (annotation `Knative`, status `Serverless`)."""
  store, base = cluster, serving_dir(tmp_path)
  first = push(base, tmp_path / "m1")
  body = kserve.body(kserve.Target("digits", service_account=ACCOUNT), NAMESPACE, kserve.stage(base, first))
  body["metadata"]["annotations"][fake.MODE] = "Knative"
  kube.create(kube.Cluster(kserve.GRANTS), "serving.kserve.io", "v1beta1", PLURAL, body)
  push(base, tmp_path / "m2")  # pushed, never deployed: the newest
  lines = kserve_rollback.roll_back("digits", base, first)
  copy = os.path.basename(serving.latest(base))
  assert traffic(store) == [(100, copy)], lines
  assert fake.reconciled(store, NAMESPACE, "digits")["metadata"]["annotations"][
      fake.MODE] == "Serverless"


@pytest.mark.parametrize("cluster", RELEASES, indirect=True)
def test_refusals_are_one_line(tmp_path, cluster):
  store, base = cluster, serving_dir(tmp_path)
  first = push(base, tmp_path / "m1")
  store.forbid("create", "inferenceservices")
  with pytest.raises(kube.ClusterError) as refused:
    kserve.KServe(kserve.Target("digits", service_account=ACCOUNT)).deploy(base, first)
  line = str(refused.value)
  assert line.startswith("create inferenceservices.serving.kserve.io digits: forbidden in "
                         "namespace team-a (") and "\n" not in line, line
  assert "kubectl apply -n team-a -f kubeflow/manifests/kserve-rbac.yaml" in line, line
  store.forbidden.clear()
  kserve.KServe(kserve.Target("digits", service_account=ACCOUNT)).deploy(base, first)
  fake.reconciled(store, NAMESPACE, "digits")
  second = push(base, tmp_path / "m2")
  with pytest.raises(kube.ClusterError, match=r"InferenceService digits runs in Knative "
                     r"mode, asked for Standard: KServe refuses to change it"):
    kserve.KServe(kserve.Target("digits", mode="standard", service_account=ACCOUNT)).deploy(base, second)
  with pytest.raises(serving.ServingError, match="no version 123 in"):
    kserve.KServe(kserve.Target("digits", service_account=ACCOUNT)).deploy(base, "123")


@pytest.mark.parametrize("install", ["kserve-rbac.yaml", "kserve-rbac-kubeflow-edit.yaml"])
def test_a_profiles_default_editor_deploys_with_the_shipped_manifests(tmp_path, monkeypatch,
                                                                      cluster, install):
  """With the stand-in authorizing as Kubernetes' RBAC does (tests/fakes/rbac.py):
  every call of a deploy, a canary, a promotion and a rollback is granted."""
  store, base = cluster, serving_dir(tmp_path)
  store.rbac = True
  rbac.profile(store, NAMESPACE)
  with open(os.path.join(REPO, "kubeflow", "manifests", install)) as f:
    rbac.apply(store, [d for d in yaml.safe_load_all(f) if d], NAMESPACE)
  server = kubernetes_api.serve(store)
  try:
    (tmp_path / "editor").write_text(
        kubernetes_api.kubeconfig(server, NAMESPACE, account="default-editor"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "editor"))
    deploy = kserve.KServe(kserve.Target("digits", canary_percent=10, service_account=ACCOUNT))
    deploy.deploy(base, push(base, tmp_path / "m1"))
    fake.reconciled(store, NAMESPACE, "digits")
    deploy.deploy(base, push(base, tmp_path / "m2"))
    deploy.promote()
    deploy.deploy(base, push(base, tmp_path / "m3"))
    kserve_rollback.roll_back("digits", base, None)
    assert traffic(store)[-1][0] == 100
  finally:
    server.shutdown()


def test_the_staged_uri_downloads_one_version(tmp_path, cluster, s3):
  store, client = cluster, s3[1]
  base = f"s3://models/{tmp_path.name}/serving"
  for version in ("17", "170"):  # 17 is a prefix of 170
    upload_folder(client, model_dir(str(tmp_path / version)), f"{base}/{version}")
  kserve.KServe(kserve.Target("digits", service_account=ACCOUNT)).deploy(base, "17")
  obj = fake.reconciled(store, NAMESPACE, "digits")
  uri = obj["spec"]["predictor"]["model"]["storageUri"]
  assert uri == f"{base}/kserve/17/" and kserve_storage.downloaded(uri) == ["17/saved_model.pb"]
  kserve.stage(base, "170")
  # Without its final "/", the prefix would also bring version 170's copy,
  # into a folder TF Serving takes for version 0.
  assert kserve_storage.downloaded(uri.rstrip("/")) == ["0/170/saved_model.pb", "17/saved_model.pb"]
  # The serving dir's version folder itself holds no numbered version.
  assert not kserve_storage.serves(f"{base}/17/")


@pytest.mark.parametrize("cluster", RELEASES, indirect=True)
def test_a_predictor_without_the_s3_secret_fails_the_deploy_naming_the_download(tmp_path,
                                                                               cluster):
  """As upstream's credential builder: the `default` account has no Secret,
  so the storage initializer goes to AWS; an account whose Secret lacks
  `s3-usehttps: "0"` speaks HTTPS to the HTTP store. The revision never
  gets Ready, the traffic stays, and the deploy says why."""
  store, base = cluster, serving_dir(tmp_path)
  first = push(base, tmp_path / "m1")
  with pytest.raises(serving.ServingError) as failed:
    kserve.KServe(kserve.Target("digits", ready_seconds=30)).deploy(base, first)
  line = str(failed.value)
  assert "\n" not in line and line.startswith(
      f"kserve: version {first} of InferenceService digits did not get Ready (revision "
      "digits-predictor-00001)"), line
  assert "ModelLoadFailed: botocore.exceptions.EndpointConnectionError: Could not connect to " \
      'the endpoint URL: "https://models.s3.amazonaws.com/' in line, line
  assert traffic(store) == []
  # An account with the keys and endpoint but HTTPS (no s3-usehttps "0").
  key = ("v1", NAMESPACE, "secrets", "s3-reader-s3")
  store.update(key, lambda o: o["metadata"]["annotations"].pop(kserve_storage.USE_HTTPS))
  deploy = kserve.KServe(kserve.Target("digits", canary_percent=10, service_account=ACCOUNT))
  second = push(base, tmp_path / "m2")
  with pytest.raises(serving.ServingError, match=r"did not get Ready .*SSL"):
    deploy.deploy(base, second)
  store.update(key, lambda o: o["metadata"]["annotations"].update({kserve_storage.USE_HTTPS: "0"}))
  third = push(base, tmp_path / "m3")
  assert deploy.deploy(base, third) == (
      f"kserve: InferenceService digits serves version {third} (100%)")
  assert traffic(store) == [(100, third)]
  # Its canary with the HTTPS Secret: refused, the traffic stays on the third.
  store.update(key, lambda o: o["metadata"]["annotations"].pop(kserve_storage.USE_HTTPS))
  fourth = push(base, tmp_path / "m4")
  with pytest.raises(serving.ServingError, match=r"did not get Ready"):
    deploy.deploy(base, fourth)
  assert {version for percent, version in traffic(store) if percent} == {third}


@pytest.mark.parametrize("cluster", RELEASES, indirect=True)
def test_a_standard_update_whose_new_pod_cannot_download_is_not_said_to_serve(tmp_path,
                                                                             cluster):
  """Standard mode's rolling update keeps the old pod, so the
  InferenceService stays Ready while the new pod's model failed to load:
  the deploy fails naming the download, not "serves version N"."""
  store, base = cluster, serving_dir(tmp_path)
  deploy = kserve.KServe(kserve.Target("digits", mode="standard", service_account=ACCOUNT,
                                       ready_seconds=30))
  first = push(base, tmp_path / "m1")
  assert deploy.deploy(base, first) == (f"kserve: created InferenceService digits: serves "
                                        f"version {first} (100%, Standard mode)")
  key = ("v1", NAMESPACE, "secrets", "s3-reader-s3")
  store.update(key, lambda o: o["metadata"]["annotations"].pop(kserve_storage.USE_HTTPS))
  second = push(base, tmp_path / "m2")
  with pytest.raises(serving.ServingError) as failed:
    deploy.deploy(base, second)
  line = str(failed.value)
  assert "\n" not in line and "did not get Ready" in line and "SSL" in line, line

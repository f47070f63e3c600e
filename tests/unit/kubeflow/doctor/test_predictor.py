"""kubeflow/doctor/predictor.py: the predictor's service account and the S3
Secret KServe's storage initializer reads, each way docs/kubeflow.md's
set-up can go wrong named in one line with its fix. What each mistake does
on the stand-in KServe (the revision never Ready, the initializer's error)
is tests/standins/test_kserve_storage.py's."""

import pytest

from tests.doctor_install import ENDPOINT, Install, doctor, only, spec
from tests.fakes import kserve_storage

NS = "team-a"
WHAT = "the predictor's service account s3-reader and its S3 Secret"


def _doctor(tmp_path, monkeypatch, capsys, change=None, **spec_args):
  """doctor's predictor line and exit status on a clean install that
  `change(store)` then breaks."""
  path = spec(tmp_path / "c", kserve=True, **spec_args)
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    if change:
      change(install.store)
    status, found = doctor(capsys, path)
  return status, only(found, f"{'ok ' if status == 0 else 'FAIL'} the predictor's")


def test_the_docs_account_and_secret_pass(tmp_path, monkeypatch, capsys):
  assert _doctor(tmp_path, monkeypatch, capsys) == (0, f"ok  {WHAT}")


def test_an_account_that_does_not_exist_fails(tmp_path, monkeypatch, capsys):
  status, line = _doctor(tmp_path, monkeypatch, capsys, kserve_account="s3-raeder")
  assert status == 1
  assert line.startswith("FAIL the predictor's service account s3-raeder and its S3 Secret: "
                         "expected the ServiceAccount s3-raeder in namespace team-a, found "
                         "none: Kubernetes refuses the predictor's pods; fix: kubectl -n "
                         "team-a apply -f the ServiceAccount and Secret of docs/kubeflow.md"), line


def test_the_default_account_without_a_secret_fails_naming_the_keys(
    tmp_path, monkeypatch, capsys):
  """No --kserve-service-account: the namespace's `default`, which lists no Secret."""
  status, line = _doctor(tmp_path, monkeypatch, capsys, kserve_account="")
  assert status == 1
  assert ("service account default and its S3 Secret: expected a Secret listed on the "
          "ServiceAccount default to hold AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, found "
          "no Secret listed: the storage initializer downloads s3://mlpipeline/private/team-a/"
          "serving with no keys") in line, line
  # The account the docs make is of no use until the spec names it.
  assert line.endswith("; fix: kubectl -n team-a apply -f the ServiceAccount s3-reader and its "
                       "Secret of docs/kubeflow.md, \"The predictor's account\", then compile "
                       "with --kserve-service-account s3-reader"), line


def test_a_listed_secret_that_is_missing_fails_naming_it(tmp_path, monkeypatch, capsys):
  status, line = _doctor(tmp_path, monkeypatch, capsys,
                         change=lambda store: store.delete(("v1", NS, "secrets", "s3-reader-s3")))
  assert status == 1
  assert ("the ServiceAccount s3-reader lists the Secret s3-reader-s3, which namespace team-a "
          'does not hold: KServe refuses the predictor\'s pod (secrets "s3-reader-s3" not '
          'found); fix: '
          "create the Secret s3-reader-s3") in line, line


def _annotations(**given):
  def change(store):
    store.update(("v1", NS, "secrets", "s3-reader-s3"),
                 lambda secret: secret["metadata"].update(annotations=given))
  return change


def test_a_secret_without_the_endpoint_goes_to_aws_and_fails(tmp_path, monkeypatch, capsys):
  status, line = _doctor(tmp_path, monkeypatch, capsys,
                         change=_annotations(**{kserve_storage.USE_HTTPS: "0"}))
  assert status == 1
  assert (f"expected the Secret s3-reader-s3 to name the store the steps write to ({ENDPOINT}) "
          "in its serving.kserve.io/s3-endpoint annotation, found none: the storage "
          "initializer goes to AWS (unless KServe's inferenceservice-config sets "
          "credentials.s3.s3Endpoint); fix: kubectl -n team-a annotate secret s3-reader-s3 "
          "serving.kserve.io/s3-endpoint=seaweedfs.kubeflow:9000") in line, line


def test_https_to_an_http_store_fails(tmp_path, monkeypatch, capsys):
  status, line = _doctor(tmp_path, monkeypatch, capsys, change=_annotations(
      **{kserve_storage.ENDPOINT: "seaweedfs.kubeflow:9000"}))
  assert status == 1
  assert line.endswith('has no serving.kserve.io/s3-usehttps: "0": the storage initializer '
                       "speaks HTTPS to it; fix: kubectl -n team-a annotate secret "
                       "s3-reader-s3 serving.kserve.io/s3-usehttps=0"), line


def _found(tmp_path, monkeypatch, capsys, change):
  path = spec(tmp_path / "c", kserve=True)
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    change(install.store)
    status, found = doctor(capsys, path)
  (line,) = [x for x in found if "the predictor's service account" in x]
  return status, line


@pytest.mark.parametrize("given, why", [
    ({kserve_storage.ENDPOINT: "http://seaweedfs.kubeflow:9000"},
     "holds a scheme, which KServe v0.20 reads and v0.15 turns into "
     "https://http://seaweedfs.kubeflow:9000"),
    ({}, "names the store in its S3_ENDPOINT key, which KServe v0.20 reads and v0.15 does not")])
def test_a_form_only_one_kserve_reads_is_not_checked_and_the_portable_one_named(
    tmp_path, monkeypatch, capsys, given, why):
  def change(store):
    _annotations(**given)(store)
    store.update(("v1", NS, "secrets", "s3-reader-s3"), lambda secret: secret[
        "stringData"].update(S3_ENDPOINT="http://seaweedfs.kubeflow:9000") if not given else None)
  status, line = _found(tmp_path, monkeypatch, capsys, change)
  assert status == 0 and line.startswith(f"not checked {WHAT}: "), line
  assert why in line and "work" in line.split(why)[1], line


def _second_secret(annotations, data):
  """A second Secret listed after the docs' one."""
  def change(store):
    store.create(("v1", NS, "secrets", "more"), {"metadata": {"annotations": annotations},
                                                 "stringData": data})
    store.update(("v1", NS, "serviceaccounts", "s3-reader"),
                 lambda account: account["secrets"].append({"name": "more"}))
  return change


def test_a_later_secret_gives_its_endpoint_but_not_its_keys(tmp_path, monkeypatch, capsys):
  """KServe merges the Secrets in order: plain values from the later one
  that names them, keys from the first (MergeEnvs never replaces them)."""
  later = _second_secret({kserve_storage.ENDPOINT: "seaweedfs.kubeflow:9000"},
                         {kserve_storage.ACCESS_KEY: "k", kserve_storage.SECRET_KEY: "s"})
  status, line = _found(tmp_path, monkeypatch, capsys, later)
  assert status == 1 and "but the Secret more has no serving.kserve.io/s3-usehttps" in line, line

  def first_without_access_key(store):
    store.update(("v1", NS, "secrets", "s3-reader-s3"), lambda secret: secret[
        "stringData"].pop(kserve_storage.ACCESS_KEY))
    later(store)
  status, line = _found(tmp_path, monkeypatch, capsys, first_without_access_key)
  assert status == 1
  assert ("expected the Secret s3-reader-s3, the first with AWS_SECRET_ACCESS_KEY on the "
          "ServiceAccount s3-reader, to hold AWS_ACCESS_KEY_ID too, found it without: the "
          "predictor's pod cannot start; fix: add AWS_ACCESS_KEY_ID") in line, line


def test_an_account_with_an_iam_role_is_not_checked(tmp_path, monkeypatch, capsys):
  role = "arn:aws:iam::123456789012:role/kserve-s3"
  status, line = _found(tmp_path, monkeypatch, capsys, lambda store: store.update(
      ("v1", NS, "serviceaccounts", "s3-reader"), lambda account: account.setdefault(
          "metadata", {}).setdefault("annotations", {}).update(
              {"eks.amazonaws.com/role-arn": role})))
  assert (status, line) == (0, f"not checked {WHAT}: the ServiceAccount s3-reader takes its "
                               f"keys from the AWS IAM role {role} (eks.amazonaws.com/role-arn), "
                               "not read here")


def test_a_user_who_may_not_read_secrets_gets_not_checked(tmp_path, monkeypatch, capsys):
  from tests.doctor_install import READER
  path = spec(tmp_path / "c", kserve=True)
  rules = READER + [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get"]}]
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=rules):
    _, found = doctor(capsys, path)
  line = only(found, "not checked the predictor's")
  assert line.startswith(f"not checked {WHAT}: your kubeconfig's user may not get secret "
                         "s3-reader-s3 in namespace team-a (HTTP 403)"), line


GS = "gs://models/digits"
GCS = "the predictor's service account gcs-reader and its GCS credentials"


def _gcs_line(tmp_path, monkeypatch, secrets, annotations=None, listed=None) -> str:
  """The predictor's line for a gs:// serving dir on a clean install where
  the account gcs-reader, with `annotations`, lists `listed` (default: the
  `secrets` made, name -> its keys)."""
  from commands.kubeflow import runs
  from kubeflow.doctor import needs, predictor
  from kubeflow.doctor.cluster import Reader
  path = spec(tmp_path / "c", kserve=True, kserve_account="gcs-reader", serving_dir=GS)
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    for name, keys in secrets.items():
      install.store.create(("v1", NS, "secrets", name), {"stringData": dict.fromkeys(keys, "x")})
    install.store.create(("v1", NS, "serviceaccounts", "gcs-reader"), {
        "metadata": {"annotations": annotations or {}},
        "secrets": [{"name": name} for name in (secrets if listed is None else listed)]})
    return str(predictor.check(needs.read(runs.load_spec(path), path), Reader(NS)))


def test_a_gs_serving_dir_with_kserves_key_file_passes(tmp_path, monkeypatch):
  line = _gcs_line(tmp_path, monkeypatch, {"gcs-key": ["gcloud-application-credentials.json"]})
  assert line == f"ok  {GCS} (gcs-key's gcloud-application-credentials.json)"


def test_two_gcs_key_secrets_mount_at_one_path_and_fail(tmp_path, monkeypatch):
  line = _gcs_line(tmp_path, monkeypatch, {
      "gcs-a": ["gcloud-application-credentials.json"],
      "aws": ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "gcloud-application-credentials.json"],
      "gcs-b": ["gcloud-application-credentials.json"]})
  assert line.startswith(f"FAIL {GCS}: expected one Secret holding gcloud-application-"
                         "credentials.json on the ServiceAccount gcs-reader, found 2 (gcs-a, "
                         "gcs-b): KServe mounts the first one's volume at /var/secrets/ once "
                         "for each"), line  # aws is S3's
  assert line.endswith("fix: keep one of them on the ServiceAccount gcs-reader (kubectl -n "
                       "team-a edit serviceaccount gcs-reader)"), line


def test_a_gs_serving_dir_without_a_key_file_is_not_checked_saying_whose_credentials(
    tmp_path, monkeypatch):
  line = _gcs_line(tmp_path, monkeypatch, {"other": ["token"]})
  assert line.startswith(f"not checked {GCS}: no Secret on the ServiceAccount gcs-reader holds "
                         "gcloud-application-credentials.json, and the account has no "
                         "iam.gke.io/gcp-service-account: the storage initializer reads "
                         f"{GS} with Google's default credentials (on GKE the node's"), line
  line = _gcs_line(tmp_path / "s3", monkeypatch, {
      "both": ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "gcloud-application-credentials.json"]})
  assert line.startswith(f"not checked {GCS}: only the Secret both holds gcloud-application-"
                         "credentials.json, and KServe reads it as S3's (it holds "
                         "AWS_SECRET_ACCESS_KEY): split it, and the account has no"), line
  line = _gcs_line(tmp_path / "w", monkeypatch, {}, {
      "iam.gke.io/gcp-service-account": "kserve@p.iam.gserviceaccount.com"})
  assert line == (f"not checked {GCS}: the ServiceAccount gcs-reader takes its Google "
                  "credentials from Workload Identity (iam.gke.io/gcp-service-account: "
                  "kserve@p.iam.gserviceaccount.com); whether that account may read "
                  f"{GS} is not read here")


def test_a_gs_serving_dirs_account_listing_a_missing_secret_fails(tmp_path, monkeypatch):
  line = _gcs_line(tmp_path, monkeypatch, {}, listed=["absent"])
  assert line.startswith(f"FAIL {GCS}: the ServiceAccount gcs-reader lists the Secret absent, "
                         "which namespace team-a does not hold"), line


def test_an_inference_service_naming_its_own_storage_secret_is_not_checked(
    tmp_path, monkeypatch, capsys):
  """KServe reads the annotation's Secret instead of the account's, and
  KServeDeploy's merge patch keeps the annotation."""
  from serving import kserve
  status, line = _found(tmp_path, monkeypatch, capsys, lambda store: store.create(
      (f"{kserve.GROUP}/{kserve.API_VERSION}", NS, kserve.PLURAL, "digits"),
      {"metadata": {"annotations": {"serving.kserve.io/storageSecretName": "by-hand",
                                    "serving.kserve.io/deploymentMode": "Serverless"}},
       "spec": {"predictor": {"model": {"storageUri": "s3://mlpipeline/private/team-a/serving/1"}}}}))
  assert (status, line) == (0, f"not checked {WHAT}: the InferenceService digits already there "
                               "names the Secret by-hand in its serving.kserve.io/"
                               "storageSecretName annotation, which KServe reads instead of the "
                               "account's Secrets and a deploy keeps; not read here")

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
          'does not hold: KServe fails the predictor (secrets "s3-reader-s3" not found); fix: '
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
          "initializer goes to AWS; fix: annotate it: kubectl -n team-a annotate secret "
          "s3-reader-s3 serving.kserve.io/s3-endpoint=seaweedfs.kubeflow:9000") in line, line


@pytest.mark.parametrize("endpoint, status", [("seaweedfs.kubeflow:9000", 1),
                                              ("http://seaweedfs.kubeflow:9000", 0)])
def test_https_to_an_http_store_fails_unless_the_endpoint_says_http(
    tmp_path, monkeypatch, capsys, endpoint, status):
  found, line = _doctor(tmp_path, monkeypatch, capsys,
                        change=_annotations(**{kserve_storage.ENDPOINT: endpoint}))
  assert found == status, line
  if status:
    assert line.endswith('has no serving.kserve.io/s3-usehttps: "0": the storage initializer '
                         "speaks HTTPS to it; fix: kubectl -n team-a annotate secret "
                         "s3-reader-s3 serving.kserve.io/s3-usehttps=0"), line


def test_a_user_who_may_not_read_secrets_gets_not_checked(tmp_path, monkeypatch, capsys):
  from tests.doctor_install import READER
  path = spec(tmp_path / "c", kserve=True)
  rules = READER + [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get"]}]
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=rules):
    _, found = doctor(capsys, path)
  line = only(found, "not checked the predictor's")
  assert line.startswith(f"not checked {WHAT}: your kubeconfig's user may not get secret "
                         "s3-reader-s3 in namespace team-a (HTTP 403)"), line

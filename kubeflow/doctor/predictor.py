"""KServe's predictor (compiled with `--kserve` and an s3:// serving dir):
its service account, and the S3 Secret KServe's storage initializer builds
its download from. A wrong one fails only at the end of a run that trained
and pushed: the new revision never becomes Ready (serving/kserve_ready.py).

The rules, from kserve/kserve at v0.15.2 and v0.20.0 (file:line at each in
tests/fakes/kserve_storage.py, which models them):
- the account is `--kserve-service-account`, else the namespace's
  `default` (pkg/credentials/service_account_credentials.go :201-203 |
  :214-216); a pod naming an account that does not exist is refused by
  Kubernetes' ServiceAccount admission plugin (kubernetes@v1.31.0
  plugin/pkg/admission/serviceaccount/admission.go, "error looking up
  service account");
- each Secret the account lists under `secrets:` must exist, or the
  predictor's reconcile fails (:245-248 | :274-277);
- the S3 keys come from a listed Secret holding `AWS_SECRET_ACCESS_KEY`
  (the names `inferenceservice-config` ships, :262 | :291), a later one
  over an earlier;
- the store is the Secret's `serving.kserve.io/s3-endpoint` annotation
  (v0.20.0 also its `S3_ENDPOINT` key), else AWS; it is spoken to over
  HTTPS unless `serving.kserve.io/s3-usehttps` is "0" (v0.20.0 also its
  `S3_USE_HTTPS` key, or an endpoint written with `http://`)
  (pkg/credentials/s3/utils.go).
"""

from typing import List, Optional

from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs

SECRET_KEY = "AWS_SECRET_ACCESS_KEY"
ENDPOINT = "serving.kserve.io/s3-endpoint"
USE_HTTPS = "serving.kserve.io/s3-usehttps"
DOCS = 'docs/kubeflow.md, "The predictor\'s account"'


def _store(reader: Reader, secret: str) -> tuple:
  """(endpoint, https) the Secret `secret` points the initializer at:
  ("", True) for AWS. Its values are read here, never shown."""
  annotations = reader.secret_annotations(secret) or {}
  values = reader.secret_values(secret) or {}
  endpoint = annotations.get(ENDPOINT, "")
  if not endpoint and values.get("S3_ENDPOINT"):  # v0.20.0 reads the key too
    endpoint = values["S3_ENDPOINT"]
  plain = (annotations.get(USE_HTTPS, values.get("S3_USE_HTTPS")) == "0"
           or endpoint.lower().startswith("http://"))
  return endpoint, not plain


def _account_line(needs: Needs, reader: Reader, account: str, what: str) -> lines.Line:
  listed = reader.service_account_secrets(account)
  if listed is None and account == "default":  # every namespace's, made by Kubernetes
    listed = []
  create = (f"kubectl -n {reader.namespace} apply -f the ServiceAccount and Secret of "
            f"{DOCS}")
  if listed is None:
    return lines.fail(what, f"expected the ServiceAccount {account} in namespace "
                            f"{reader.namespace}, found none: Kubernetes refuses the "
                            f"predictor's pods", create)
  s3: List[str] = []
  for name in listed:
    keys = reader.secret_keys(name)
    if keys is None:
      return lines.fail(what, f"the ServiceAccount {account} lists the Secret {name}, which "
                              f"namespace {reader.namespace} does not hold: KServe fails the "
                              f'predictor (secrets "{name}" not found)',
                        f"create the Secret {name} ({DOCS}), or remove it from the account")
    if SECRET_KEY in keys:
      s3.append(name)
  if not s3:
    if not needs.kserve_target.get("service_account"):  # compiled without one: the docs' own
      create = (f"kubectl -n {reader.namespace} apply -f the ServiceAccount s3-reader and its "
                f"Secret of {DOCS}, then compile with --kserve-service-account s3-reader")
    return lines.fail(what, f"expected a Secret listed on the ServiceAccount {account} to hold "
                            f"AWS_ACCESS_KEY_ID and {SECRET_KEY}, found "
                            f"{', '.join(listed) or 'no Secret listed'}: the storage "
                            f"initializer downloads {needs.places['the serving dir']} with no "
                            f"keys", create)
  steps = needs.env.get("S3_ENDPOINT", "")
  endpoint, https = _store(reader, s3[-1])
  if steps and not endpoint:
    return lines.fail(what, f"expected the Secret {s3[-1]} to name the store the steps write "
                            f"to ({steps}) in its {ENDPOINT} annotation, found none: the "
                            f"storage initializer goes to AWS",
                      f"annotate it: kubectl -n {reader.namespace} annotate secret {s3[-1]} "
                      f"{ENDPOINT}={steps.split('://', 1)[-1]}")
  if steps.lower().startswith("http://") and https:
    return lines.fail(what, f"the steps' store {steps} speaks HTTP, but the Secret {s3[-1]} has "
                            f"no {USE_HTTPS}: \"0\": the storage initializer speaks HTTPS to it",
                      f"kubectl -n {reader.namespace} annotate secret {s3[-1]} {USE_HTTPS}=0")
  return lines.ok(what)


def check(needs: Needs, reader: Reader) -> Optional[lines.Line]:
  """The predictor account's line, for an s3:// serving dir; None otherwise
  (GCS credentials and Workload Identity are not read here)."""
  if not needs.places.get("the serving dir", "").startswith("s3://"):
    return None
  account = needs.kserve_target.get("service_account") or "default"
  what = f"the predictor's service account {account} and its S3 Secret"
  try:
    return _account_line(needs, reader, account, what)
  except Unreadable as e:
    return lines.unchecked(what, str(e))

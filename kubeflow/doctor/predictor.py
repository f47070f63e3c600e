"""KServe's predictor (compiled with `--kserve` and an s3:// serving dir):
its service account, and the S3 Secret KServe's storage initializer builds
its download from. A wrong one fails only at the end of a run that trained
and pushed: the new revision never becomes Ready (serving/kserve_ready.py).

The rules, from kserve/kserve (pkg/credentials/service_account_credentials.go
unless said; lines at v0.15.2 | v0.20.0), modelled by tests/fakes/kserve_storage.py:
- the account is `--kserve-service-account`, else the namespace's `default`
  (:201-203 | :214-216); one that does not exist gives nothing (:204-209 |
  :217-222), and Kubernetes' ServiceAccount admission refuses the pod;
- each Secret it lists (:232-237 | :260-266) must exist: the injector's
  error (:245-248 | :274-277) refuses the pod at the pod webhook
  (storage_initializer_injector.go:443 | mutator.go:134, then
  storage_initializer_injector.go:783 and :585);
- an S3 Secret is one holding `AWS_SECRET_ACCESS_KEY` (:262 | :291; the names
  config/configmap/inferenceservice.yaml ships, :633-634 | :673-674), and its
  `AWS_ACCESS_KEY_ID` is a required key of the pod's env; the keys are
  `valueFrom`, which pkg/credentials/utils.go MergeEnvs (:135 | :139) never
  replaces, so the first S3 Secret's keys are used; a later one's endpoint
  replaces an earlier one's only where it names one;
- the endpoint is the Secret's `serving.kserve.io/s3-endpoint` annotation
  (s3/utils.go :24 | :39); v0.20.0 also reads its `S3_ENDPOINT` key and an
  endpoint written with its scheme (:131-142, :166-174), which v0.15.2 turns
  into `https://http://...`; both fall back to `inferenceservice-config`'s
  `credentials.s3.s3Endpoint` (:43-60 | :138), else AWS; HTTPS unless
  `serving.kserve.io/s3-usehttps` is "0" (:25-29 | :176-182).
For a gs:// serving dir (lines at v0.15.2 | v0.20.0): a listed Secret
without `AWS_SECRET_ACCESS_KEY` (read as S3's first) that holds
`gcloud-application-credentials.json` (gcs/gcs_secret.go :24 | :24;
inferenceservice-config's `credentials.gcs.gcsCredentialFileName` may
rename it, not read here) is mounted at /var/secrets/ as the volume
`user-gcp-sa`, GOOGLE_APPLICATION_CREDENTIALS pointing at it (:267-276 |
:296-305); a second such Secret adds a second mount of that volume at the
same path (pkg/utils/utils.go AppendVolumeIfNotExists dedupes volumes by
name, not mounts), which Kubernetes refuses ("must be unique",
pkg/apis/core/validation ValidateVolumeMounts); with none, the
initializer's storage.Client() takes Google's default credentials (on GKE
the node's or Workload Identity's, `iam.gke.io/gcp-service-account`;
elsewhere anonymous, public buckets only: storage.py:330-333 |
kserve_storage.py:689-692), which doctor cannot test from here.
An InferenceService already there with `serving.kserve.io/storageSecretName`
(inferenceservice-config's `storageSecretNameAnnotation`, shipped with that
name: config/configmap/inferenceservice.yaml :203 | :218) takes its
credentials from that Secret alone, not the account's (:219-229 | :248-258);
KServeDeploy's merge patch keeps its annotations, so that line is "not
checked".
Not read here: which KServe runs (a form only one release reads is "not
checked"), IRSA's role (`eks.amazonaws.com/role-arn` on the account),
`storage-config` and a `storage:` spec (KServeDeploy writes neither),
`s3-verifyssl` and CA bundles.
"""

from typing import Dict, List, Optional

from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs

ACCESS_KEY, SECRET_KEY = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"
ENDPOINT = "serving.kserve.io/s3-endpoint"
USE_HTTPS = "serving.kserve.io/s3-usehttps"
IRSA = "eks.amazonaws.com/role-arn"
STORAGE_SECRET = "serving.kserve.io/storageSecretName"
GCS_KEY_FILE = "gcloud-application-credentials.json"
WORKLOAD_IDENTITY = "iam.gke.io/gcp-service-account"
DOCS = 'docs/kubeflow.md, "The predictor\'s account"'


def _s3_secrets(reader: Reader, account: str, listed: List[str]):
  """[(name, its keys)] of the listed Secrets that are S3's, in order; or a
  FAIL line's (found, fix) for a listed Secret that does not exist."""
  out = []
  for name in listed:
    keys = reader.secret_keys(name)
    if keys is None:
      return None, (f"the ServiceAccount {account} lists the Secret {name}, which namespace "
                    f"{reader.namespace} does not hold: KServe refuses the predictor's pod "
                    f'(secrets "{name}" not found)',
                    f"create the Secret {name} ({DOCS}), or remove it from the account")
    if SECRET_KEY in keys:
      out.append((name, keys))
  return out, None


def _endpoint_line(needs: Needs, reader: Reader, s3, what: str) -> lines.Line:
  """The store the initializer is sent to, against the steps' S3_ENDPOINT."""
  steps = needs.env.get("S3_ENDPOINT", "")
  if not steps:  # the steps write to AWS: so does the initializer, with no endpoint
    return lines.ok(what)
  named = [(name, reader.secret_annotations(name) or {}) for name, _ in s3]
  named = [(name, a) for name, a in named if a.get(ENDPOINT)]
  host = steps.split("://", 1)[-1]
  if not named:
    if any("S3_ENDPOINT" in keys for _, keys in s3):
      return lines.unchecked(what, f"the Secret {s3[0][0]} names the store in its S3_ENDPOINT "
                                   f"key, which KServe v0.20 reads and v0.15 does not (which "
                                   f"one runs is not read here); the {ENDPOINT} annotation "
                                   f"works on both")
    return lines.fail(what, f"expected the Secret {s3[0][0]} to name the store the steps write "
                            f"to ({steps}) in its {ENDPOINT} annotation, found none: the "
                            f"storage initializer goes to AWS (unless KServe's "
                            f"inferenceservice-config sets credentials.s3.s3Endpoint)",
                      f"kubectl -n {reader.namespace} annotate secret {s3[0][0]} "
                      f"{ENDPOINT}={host}")
  name, annotations = named[-1]
  if "://" in annotations[ENDPOINT]:
    return lines.unchecked(what, f"the Secret {name}'s {ENDPOINT} holds a scheme, which KServe "
                                 f"v0.20 reads and v0.15 turns into https://{annotations[ENDPOINT]}"
                                 f" (which one runs is not read here); write {host} and "
                                 f"{USE_HTTPS}, which work on both")
  if steps.lower().startswith("http://") and annotations.get(USE_HTTPS) != "0":
    return lines.fail(what, f"the steps' store {steps} speaks HTTP, but the Secret {name} has "
                            f"no {USE_HTTPS}: \"0\": the storage initializer speaks HTTPS to it",
                      f"kubectl -n {reader.namespace} annotate secret {name} {USE_HTTPS}=0")
  return lines.ok(what)


def _account(reader: Reader, account: str, what: str):
  """(the Secrets it lists, its annotations), or a FAIL line when it does
  not exist."""
  found = reader.service_account(account)
  if found is None and account == "default":  # every namespace's, made by Kubernetes
    found = [], {}
  if found is None:
    return lines.fail(what, f"expected the ServiceAccount {account} in namespace "
                            f"{reader.namespace}, found none: Kubernetes refuses the "
                            f"predictor's pods",
                      f"kubectl -n {reader.namespace} apply -f the ServiceAccount and Secret "
                      f"of {DOCS}")
  return found


def _s3_line(needs: Needs, reader: Reader, account: str, what: str, listed: List[str],
             annotations: Dict[str, str]) -> lines.Line:
  create = (f"kubectl -n {reader.namespace} apply -f the ServiceAccount and Secret of "
            f"{DOCS}")
  if IRSA in annotations:
    return lines.unchecked(what, f"the ServiceAccount {account} takes its keys from the AWS "
                                 f"IAM role {annotations[IRSA]} ({IRSA}), not read here")
  s3, missing = _s3_secrets(reader, account, listed)
  if missing:
    return lines.fail(what, *missing)
  if not s3:
    if not needs.kserve_target.get("service_account"):  # compiled without one: the docs' own
      create = (f"kubectl -n {reader.namespace} apply -f the ServiceAccount s3-reader and its "
                f"Secret of {DOCS}, then compile with --kserve-service-account s3-reader")
    return lines.fail(what, f"expected a Secret listed on the ServiceAccount {account} to hold "
                            f"{ACCESS_KEY} and {SECRET_KEY}, found "
                            f"{', '.join(listed) or 'no Secret listed'}: the storage "
                            f"initializer downloads {needs.places['the serving dir']} with no "
                            f"keys", create)
  first, keys = s3[0]  # its keys are the ones used
  if ACCESS_KEY not in keys:
    return lines.fail(what, f"expected the Secret {first}, the first with {SECRET_KEY} on the "
                            f"ServiceAccount {account}, to hold {ACCESS_KEY} too, found it "
                            f"without: the predictor's pod cannot start",
                      f"add {ACCESS_KEY} to the Secret {first} ({DOCS})")
  return _endpoint_line(needs, reader, s3, what)


def _gcs_line(needs: Needs, reader: Reader, account: str, what: str, listed: List[str],
              annotations: Dict[str, str]) -> lines.Line:
  s3, missing = _s3_secrets(reader, account, listed)
  if missing:
    return lines.fail(what, *missing)
  s3 = {name for name, _ in s3}  # KServe reads those as S3's, whatever else they hold
  gcs = [name for name in listed if name not in s3 and GCS_KEY_FILE in reader.secret_keys(name)]
  if len(gcs) > 1:
    return lines.fail(what, f"expected one Secret holding {GCS_KEY_FILE} on the ServiceAccount "
                            f"{account}, found {len(gcs)} ({', '.join(gcs)}): KServe mounts the "
                            f"first one's volume at /var/secrets/ once for each, and Kubernetes "
                            f"refuses the predictor's pod (volumeMounts mountPath: must be "
                            f"unique)",
                      f"keep one of them on the ServiceAccount {account} (kubectl -n "
                      f"{reader.namespace} edit serviceaccount {account})")
  if gcs:
    return lines.ok(f"{what} ({gcs[0]}'s {GCS_KEY_FILE})")
  serving_dir = needs.places["the serving dir"]
  if WORKLOAD_IDENTITY in annotations:
    return lines.unchecked(what, f"the ServiceAccount {account} takes its Google credentials "
                                 f"from Workload Identity ({WORKLOAD_IDENTITY}: "
                                 f"{annotations[WORKLOAD_IDENTITY]}); whether that account may "
                                 f"read {serving_dir} is not read here")
  as_s3 = [name for name in sorted(s3) if GCS_KEY_FILE in reader.secret_keys(name)]
  held = (f"only the Secret {as_s3[0]} holds {GCS_KEY_FILE}, and KServe reads it as S3's (it "
          f"holds {SECRET_KEY}): split it" if as_s3
          else f"no Secret on the ServiceAccount {account} holds {GCS_KEY_FILE}")
  return lines.unchecked(what, f"{held}, and the account has no {WORKLOAD_IDENTITY}: the "
                               f"storage initializer reads {serving_dir} with Google's default "
                               f"credentials (on GKE the node's or Workload Identity's; "
                               f"elsewhere none, public buckets only), which doctor cannot test "
                               f"from here ({DOCS})")


def check(needs: Needs, reader: Reader) -> Optional[lines.Line]:
  """The predictor account's line, for an s3:// or gs:// serving dir; None
  otherwise."""
  serving_dir = needs.places.get("the serving dir", "")
  account = needs.kserve_target.get("service_account") or "default"
  if serving_dir.startswith("s3://"):
    what, checked = f"the predictor's service account {account} and its S3 Secret", _s3_line
  elif serving_dir.startswith("gs://"):
    what, checked = f"the predictor's service account {account} and its GCS credentials", _gcs_line
  else:
    return None
  try:
    secret = _storage_secret(needs, reader)
    if secret:
      return lines.unchecked(what, f"the InferenceService {needs.kserve_target['name']} already "
                                   f"there names the Secret {secret} in its {STORAGE_SECRET} "
                                   f"annotation, which KServe reads instead of the account's "
                                   f"Secrets and a deploy keeps; not read here")
    found = _account(reader, account, what)
    return found if isinstance(found, lines.Line) else checked(needs, reader, account, what,
                                                               *found)
  except Unreadable as e:
    return lines.unchecked(what, str(e))


def _storage_secret(needs: Needs, reader: Reader) -> str:
  from serving import kserve
  name = needs.kserve_target.get("name")
  try:  # one the user may not read: the mode's line says so; the account's is still read
    found = reader.custom(kserve.GROUP, kserve.API_VERSION, kserve.PLURAL, name) if name else None
  except Unreadable:
    return ""
  return ((found or {}).get("metadata", {}).get("annotations") or {}).get(STORAGE_SECRET, "")

"""The launcher's store: the namespace's `kfp-launcher` ConfigMap has a
`providers` entry for an s3:// root on the install's own store, and the
Secrets the launcher and the steps take keys from hold those keys.

Why (kubeflow/compile/launcher_config.py has the whole story): the KFP
launcher opens an s3:// root only from the `providers` of the run
namespace's `kfp-launcher` ConfigMap (kubeflow/pipelines@2.17.0
`backend/src/v2/config/env.go` lines 40 and 123-174); without it the root
is AWS's (`config/s3.go` lines 25-96: no endpoint, no path style), and the
first step fails after its program succeeded. The launcher reads the
keys from the Secret its `secretRef` names; a step whose `--secret-env`
Secret or key is missing never starts (CreateContainerConfigError).
"""

import urllib.parse
from typing import Dict, List, Optional, Tuple

import yaml

from kubeflow.compile import launcher_config
from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs
from kubeflow.errors import CompileError
from kubeflow.steps import backend
from runtime import storage

# The install's own store's Service by Pipelines version (docs/kubeflow.md,
# "The install's own store"): MinIO's `minio-service` to 2.15 (SeaweedFS
# behind it at 2.15, whose own `seaweedfs` Service serves S3 on 8333), then
# `seaweedfs` once 2.16 removed `minio-service` (#12613).
SEAWEEDFS_FROM = (2, 16)


def _service(endpoint: str) -> str:
  return (urllib.parse.urlparse(endpoint if "//" in endpoint else f"//{endpoint}").hostname
          or "").split(".")[0]


def check_install_store(needs: Needs, tag: str) -> List[lines.Line]:
  """The steps' S3_ENDPOINT against the store of the install's Pipelines
  `tag` (the API server's healthz `tag_name`); no line for a store that
  is not the install's own."""
  endpoint = needs.env.get("S3_ENDPOINT", "")
  named = _service(endpoint)
  by_version = {_service(storage.MINIO): storage.MINIO, _service(storage.SEAWEEDFS):
                storage.SEAWEEDFS}
  if named not in by_version:
    return []
  what = f"the install's own store for S3_ENDPOINT {endpoint}"
  try:
    version = tuple(int(p) for p in tag.lstrip("v").split(".")[:2])
  except ValueError:
    return [lines.unchecked(what, f"the API server's healthz names its version {tag!r}; an "
                                  f"admin can read it: kubectl -n kubeflow get deploy "
                                  f"ml-pipeline -o jsonpath='{{.spec.template.spec."
                                  f"containers[0].image}}'")]
  wanted = storage.SEAWEEDFS if version >= SEAWEEDFS_FROM else storage.MINIO
  if by_version[named] == wanted:
    return [lines.ok(f"{what} (Kubeflow Pipelines {tag})")]
  return [lines.fail(what, f"expected {wanted} on Kubeflow Pipelines {tag} (MinIO's "
                           f"minio-service before 2.16, SeaweedFS from it), found {named}",
                     f"compile with --env S3_ENDPOINT={wanted}, then kubectl apply -n "
                     f"{needs.namespace} -f the {launcher_config.FILE} it writes")]


def _apply(needs: Needs) -> str:
  if needs.launcher_file:
    return f"kubectl apply -n {needs.namespace} -f {needs.launcher_file}"
  return (f"compile with --env S3_ENDPOINT=... and the keys' --secret-env, which writes "
          f"{launcher_config.FILE} beside the spec, then kubectl apply -n {needs.namespace} "
          f"-f it")


def _default(providers_text: str) -> Dict:
  """The s3 default provider of a ConfigMap's `providers` text ({} if none)."""
  try:
    parsed = yaml.safe_load(providers_text or "") or {}
  except yaml.YAMLError:
    return {}
  s3 = parsed.get("s3") if isinstance(parsed, dict) else None
  default = s3.get("default") if isinstance(s3, dict) else None
  return default if isinstance(default, dict) else {}


def check_providers(needs: Needs, reader: Reader) -> Tuple[List[lines.Line], Optional[Dict]]:
  """The kfp-launcher ConfigMap's line, and the s3 default provider the
  launcher will use (None when the root needs none or it is unknown)."""
  what = f"the launcher's store for {needs.root} ({backend.CONFIG_MAP} ConfigMap, " \
         f"namespace {needs.namespace})"
  try:
    wanted = needs.launcher()
  except CompileError as e:
    return [lines.fail(what, str(e), "compile with both keys from one Secret")], None
  if wanted is None:  # gs://, a folder, or AWS itself: the launcher's defaults do
    return [], None
  expected = _default(wanted["data"]["providers"])
  try:
    data = reader.configmap(backend.CONFIG_MAP)
  except Unreadable as e:
    return [lines.unchecked(what, str(e))], expected
  if data is None or not data.get("providers"):
    found = "no such ConfigMap" if data is None else "a ConfigMap without `providers`"
    return [lines.fail(what, f"expected `providers` with s3 endpoint {expected['endpoint']} "
                             f"(else the launcher opens s3:// as AWS's), found {found}",
                       _apply(needs))], expected
  default = _default(data["providers"])
  if default.get("endpoint") != expected["endpoint"]:
    return [lines.fail(what, f"expected the s3 default endpoint {expected['endpoint']} (the "
                             f"steps' S3_ENDPOINT), found "
                             f"{default.get('endpoint') or 'no s3 default'}",
                       _apply(needs))], expected
  return [lines.ok(what)], default


def _secret_line(reader: Reader, name: str, keys: List[str], who: str) -> lines.Line:
  what = f"the Secret {name} (keys {', '.join(keys)}), for {who}"
  try:
    found = reader.secret_keys(name)
  except Unreadable as e:  # `describe` lists a Secret's keys and sizes, never its values
    return lines.unchecked(what, f"{e}; an admin can look: kubectl -n {reader.namespace} "
                                 f"describe secret {name}")
  fix = (f"kubectl -n {reader.namespace} create secret generic {name} "
         + " ".join(f"--from-literal={k}=..." for k in keys))
  if found is None:
    return lines.fail(what, f"expected it in namespace {reader.namespace}, found none", fix)
  missing = [k for k in keys if k not in found]
  if missing:
    return lines.fail(what, f"expected the keys {', '.join(keys)}, found "
                            f"{', '.join(sorted(found)) or 'none'}",
                      f"add {', '.join(missing)} to it (kubectl -n {reader.namespace} edit "
                      f"secret {name}), or compile with the keys it holds")
  return lines.ok(what)


def check_secrets(needs: Needs, reader: Reader, provider: Optional[Dict]) -> List[lines.Line]:
  """A line per Secret: the launcher's secretRef's, then the steps'."""
  wanted: Dict[str, Dict[str, List[str]]] = {}
  ref = ((provider or {}).get("credentials") or {}).get("secretRef") or {}
  if ref.get("secretName") and not (provider or {}).get("credentials", {}).get("fromEnv"):
    wanted.setdefault(ref["secretName"], {})["the launcher"] = [
        ref.get("accessKeyKey", ""), ref.get("secretKeyKey", "")]
  for secret, key, _ in needs.secret_env:
    wanted.setdefault(secret, {}).setdefault("the steps' --secret-env", []).append(key)
  out = []
  for name, by_who in sorted(wanted.items()):
    keys = sorted({k for ks in by_who.values() for k in ks if k})
    out.append(_secret_line(reader, name, keys, " and ".join(sorted(by_who))))
  return out

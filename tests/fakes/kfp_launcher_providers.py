"""A STAND-IN for how the KFP root DAG driver makes a run's store session
from the namespace's `kfp-launcher` ConfigMap: kubeflow/pipelines
`backend/src/v2` at 2.5.0, 2.15.0 and 2.17.0, each rule cited beside its
code. tests/fakes/kfp_launcher_store.py opens the bucket from the session.

- The root (`objectstore/config.go` ParseBucketPathToConfig, @2.17.0 lines
  118-152, @2.5.0 lines 103-136): `scheme://bucket/prefix?query`, the
  scheme one of gs, s3, minio, mem, else the driver fails; the prefix
  gets a trailing `/` (so an override's keyPrefix `tfx/` matches the root
  `s3://b/tfx`).
- The `providers` text (`config/env.go`@2.17.0 lines 163-175, @2.5.0 lines
  150-162) is parsed for every root, whatever its scheme, by
  sigs.k8s.io/yaml: YAML made JSON (its object keys sorted), then
  encoding/json, which matches a field's name case-insensitively
  (`overrides:` is `Overrides`, as upstream's own
  `config/testdata/provider_cases.yaml`@2.17.0 writes it), ignores unknown
  keys, leaves null as unset, and refuses a value of the wrong type
  (`disableSSL: "true"`, a string, fails the run).
- The `s3` entry becomes the session's params (S3ProviderConfig.
  ProvideSessionInfo, `config/s3.go`@2.17.0 lines 72-172, @2.5.0 lines
  67-159; 2.15.0 is 2.17.0's): its defaults, `maxRetries` from 2.15, and
  the first override whose bucket and key prefix match. A nil pointer the
  code dereferences (a default without `secretRef`; an override's
  `maxRetries` with none in the default) panics the driver.

minio:// and gs:// roots get no params here: no stand-in store serves them.
"""

import json
import re
from typing import Dict

import yaml


class StoreError(RuntimeError):
  """What the driver or the launcher says when the store fails it."""


class DriverPanic(StoreError):
  """A Go panic in the root DAG driver: its pod crashes, the run fails."""


def q(text: str) -> str:
  """Go's %q of a string."""
  return json.dumps(text)


# objectstore/config.go@2.17.0 line 118 (line 103 at 2.5.0).
BUCKET = re.compile(r"(^[a-z][a-z0-9]+:///?)([^/?]+)(/[^?]*)?(\?.+)?\Z")
SCHEMES = ("gs://", "s3://", "minio://", "mem://")


def parse_root(root: str):
  """ParseBucketPathToConfig: (scheme, bucket, prefix, query string)."""
  found = BUCKET.match(root)
  if not found:
    raise StoreError(f"parse bucket config failed: unrecognized pipeline root format: {q(root)}")
  scheme, bucket, prefix, query = found.groups()
  if scheme not in SCHEMES:
    raise StoreError(f"parse bucket config failed: unsupported Cloud bucket: {q(root)}")
  prefix = (prefix or "").lstrip("/")
  if prefix and not prefix.endswith("/"):  # @2.17.0 lines 141-144, @2.5.0 lines 125-128
    prefix += "/"
  return scheme, bucket, prefix, query or ""


# The Go structs the `s3` entry is decoded into, with their json tags
# (config/s3.go@2.17.0 lines 25-70; @2.5.0 lines 24-65, without maxRetries).
STRUCTS = {
    "S3ProviderConfig": {"default": "S3ProviderDefault", "Overrides": ["S3Override"]},
    "S3ProviderDefault": {"endpoint": str, "credentials": "S3Credentials", "region": str,
                          "disableSSL": bool, "forcePathStyle": bool, "maxRetries": int},
    "S3Credentials": {"fromEnv": bool, "secretRef": "S3SecretRef"},
    "S3Override": {"endpoint": str, "region": str, "disableSSL": bool, "bucketName": str,
                   "keyPrefix": str, "credentials": "S3Credentials", "forcePathStyle": bool,
                   "maxRetries": int},
    "S3SecretRef": {"secretName": str, "accessKeyKey": str, "secretKeyKey": str},
}
GO = {str: "string", bool: "bool", int: "int"}


def _json_kind(value) -> str:
  return ("bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float))
          else "string" if isinstance(value, str) else "array" if isinstance(value, list)
          else "object")


def _decode(value, kind, path: str, owner: str, version):
  """encoding/json's Unmarshal of one value into Go type `kind`."""
  if value is None:
    return None
  if isinstance(kind, list):
    if not isinstance(value, list):
      raise _type_error(value, f"[]config.{kind[0]}", owner, path)
    return [_decode(v, kind[0], path, kind[0], version) for v in value]
  if isinstance(kind, str):
    if not isinstance(value, dict):
      raise _type_error(value, f"config.{kind}", owner, path)
    fields = {f: t for f, t in STRUCTS[kind].items() if f != "maxRetries" or version >= (2, 15)}
    out = {}
    for key in sorted(value, key=str):  # the later of two spellings wins
      name = next((f for f in fields if f.lower() == str(key).lower()), None)
      if name:
        out[name] = _decode(value[key], fields[name], f"{path}.{name}", kind, version)
    return out
  integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
  if (isinstance(value, bool) != (kind is bool) or (kind is int and not integral)
      or (kind is str and not isinstance(value, str))):
    raise _type_error(value, GO[kind], owner, path)
  return int(value) if kind is int else value


def _type_error(value, go_type: str, owner: str, path: str) -> StoreError:
  return StoreError(
      f"failed to unmarshall kfp bucket providers, ensure that providers config is well "
      f"formed: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
      f"{_json_kind(value)} into Go struct field {owner}.{path} of type {go_type}")


def providers(launcher_data: Dict[str, str], version) -> Dict:
  """getBucketProviders: the `s3` entry decoded ({} for none)."""
  text = launcher_data.get("providers", "")
  if not text:
    return {}
  try:
    found = yaml.safe_load(text)
  except yaml.YAMLError as e:  # env.go@2.17.0 line 172, @2.5.0 line 159
    raise StoreError(f"failed to unmarshall kfp bucket providers, ensure that providers config "
                     f"is well formed: error converting YAML to JSON: {e}") from None
  if found is None:
    return {}
  if not isinstance(found, dict):
    raise StoreError(f"failed to unmarshall kfp bucket providers, ensure that providers config "
                     f"is well formed: error unmarshaling JSON: while decoding JSON: json: "
                     f"cannot unmarshal {_json_kind(found)} into Go value of type "
                     f"config.BucketProviders")
  s3 = [found[k] for k in sorted(found, key=str) if str(k).lower() == "s3"]
  return _decode(s3[-1] if s3 else None, "S3ProviderConfig", "s3", "BucketProviders",
                 version) or {}


def session_info(launcher_data: Dict[str, str], root: str, version=(2, 17)) -> Dict:
  """cfg.GetStoreSessionInfo(root) for the run (`config/env.go`@2.17.0 lines
  118-161), as the root driver stores it in the run's context.

  Raises:
    StoreError: the driver's error (the run fails before any step).
  """
  scheme, bucket, prefix, query = parse_root(root)  # ParseProviderFromPath first
  config = providers(launcher_data, version)
  if scheme != "s3://":
    return {"Provider": scheme[:-3], "Params": {}}  # not modelled here
  default, overrides = config.get("default"), config.get("Overrides")
  # s3.go@2.17.0 lines 87-96, @2.5.0 lines 82-91: no provider config, or a
  # query string in the root: the environment's (AWS's) defaults.
  if (default is None and overrides is None) or query:
    return {"Provider": "s3", "Params": {"fromEnv": "true"}}
  if default is None or default.get("credentials") is None:  # @2.17.0 line 98, @2.5.0 line 93
    raise StoreError("invalid provider config: missing default credentials")
  params = {"endpoint": default.get("endpoint") or "", "region": default.get("region") or "",
            # @2.17.0 lines 105-115, @2.5.0 lines 100-110: SSL on, path style
            # on, unless said otherwise.
            "disableSSL": _bool(default.get("disableSSL"), False),
            "forcePathStyle": _bool(default.get("forcePathStyle"), True)}
  if version >= (2, 15):  # @2.17.0 lines 116-120: 5 unless said otherwise
    params["maxRetries"] = str(default["maxRetries"] if default.get("maxRetries") is not None
                               else 5)
  _credentials(params, default["credentials"], "s3.go@2.17.0 line 124, @2.5.0 line 114")
  # @2.17.0 lines 135-170, @2.5.0 lines 125-157: the first override whose
  # bucket matches and whose keyPrefix the root's prefix starts with.
  for override in overrides or []:
    if (override.get("bucketName") or "") != bucket or not prefix.startswith(
        override.get("keyPrefix") or ""):
      continue
    params.update({k: override[k] for k in ("endpoint", "region") if override.get(k)})
    for key in ("disableSSL", "forcePathStyle"):
      if override.get(key) is not None:
        params[key] = _bool(override[key], False)
    if version >= (2, 15) and override.get("maxRetries") is not None:
      if default.get("maxRetries") is None:  # @2.17.0 line 151 reads the default's
        raise DriverPanic("panic: runtime error: invalid memory address or nil pointer "
                          "dereference (config/s3.go@2.17.0 line 151: an override's "
                          "maxRetries copies the default's, which is unset)")
      params["maxRetries"] = str(default["maxRetries"])
    if override.get("credentials") is None:
      raise StoreError("invalid provider config: missing override credentials")
    for key in ("secretName", "accessKeyKey", "secretKeyKey"):
      params.pop(key, None)
    if not override["credentials"].get("fromEnv") and override["credentials"].get(
        "secretRef") is None:  # @2.17.0 lines 158-160, @2.5.0 lines 145-147
      raise StoreError("invalid provider config: missing override secretref")
    _credentials(params, override["credentials"], "")
    break
  return {"Provider": "s3", "Params": params}


def _bool(value, unset: bool) -> str:
  """strconv.FormatBool of a *bool, `unset` when nil."""
  return "true" if (unset if value is None else value) else "false"


def _credentials(params: Dict, credentials: Dict, where: str) -> None:
  params["fromEnv"] = _bool(credentials.get("fromEnv"), False)
  if credentials.get("fromEnv"):
    return
  ref = credentials.get("secretRef")
  if ref is None:  # only the default's reaches here: its nil SecretRef is dereferenced
    raise DriverPanic(f"panic: runtime error: invalid memory address or nil pointer "
                      f"dereference ({where}: the default's credentials have no secretRef)")
  params.update(secretName=ref.get("secretName") or "", accessKeyKey=ref.get("accessKeyKey")
                or "", secretKeyKey=ref.get("secretKeyKey") or "")

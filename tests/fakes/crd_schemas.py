"""The engines' CRDs, from their releases' own files, as the API server
applies them to an object it is asked to create. A STAND-IN for the API
server's CRD validation (kubernetes_api.py calls it).

The files in tests/fakes/crds/ are the releases' CRDs as they are, named
`<repository>@<tag>.<file>` (kubeflow/trainer `manifests/base/crds/`,
kubeflow/training-operator `manifests/base/crds/`, kserve/kserve
`config/crd/full/`). From each version's
`schema.openAPIV3Schema`, as apiextensions-apiserver does
(`pkg/apiserver/schema`, Kubernetes v1.31):
- strict decoding (`fieldValidation=Strict`, what the launcher sends): a
  field the schema does not declare is refused, `strict decoding error:
  unknown field "spec.x"`, unless its object says
  `x-kubernetes-preserve-unknown-fields: true`;
- then the schema: types (`x-kubernetes-int-or-string` takes either),
  required fields, enums, formats not; answered 422 as the API server
  words it, `<Kind>.<group> "<name>" is invalid: <field>: <what>`.
- the CEL rules on the object's name at its root (`x-kubernetes-validations`:
  TrainJob's `self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`
  and `size(self.metadata.name) <= 63`, kubeflow/trainer v2.2.0
  `pkg/apis/trainer/v1alpha1/trainjob_types.go` lines 36-37), in their
  words; and Kubernetes' own rules for any object's name, a DNS-1123
  subdomain, and its labels: a value of at most 63 characters, alphanumeric
  at both ends with `-_.` between (`apimachinery/pkg/util/validation`
  IsDNS1123Subdomain, IsValidLabelValue; `metav1validation.ValidateLabels`).
Not modelled: other CEL rules (in these files: immutability on update,
which a create never meets, and TrainJob's `managedBy` values, which the
launcher does not set), defaulting, pruning without strict validation,
list types and map keys, formats.
"""

import functools
import os
import re
from typing import Dict, List, Optional

import yaml

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds")
FILES = {  # (plural, release) -> file
    ("trainjobs", "2.0"): "kubeflow-trainer@v2.0.0.trainer.kubeflow.org_trainjobs.yaml",
    ("trainjobs", "2.1"): "kubeflow-trainer@v2.1.0.trainer.kubeflow.org_trainjobs.yaml",
    ("trainjobs", "2.2"): "kubeflow-trainer@v2.2.0.trainer.kubeflow.org_trainjobs.yaml",
    ("trainjobs", "2.3"): "kubeflow-trainer@v2.3.0.trainer.kubeflow.org_trainjobs.yaml",
    ("tfjobs", "1.9"): "training-operator@release-1.9-078ec30.kubeflow.org_tfjobs.yaml",
    ("inferenceservices", "0.15"): "kserve@v0.15.2.serving.kserve.io_inferenceservices.yaml",
    ("inferenceservices", "0.20"): "kserve@v0.20.0.serving.kserve.io_inferenceservices.yaml",
}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
         "integer": int, "number": (int, float)}


@functools.lru_cache(maxsize=None)
def crd(plural: str, release: str) -> Optional[dict]:
  name = FILES.get((plural, release))
  if name is None:
    return None
  with open(os.path.join(FOLDER, name), encoding="utf-8") as f:
    return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def schema_of(plural: str, release: str, version: str) -> Optional[dict]:
  found = crd(plural, release)
  for v in (found or {}).get("spec", {}).get("versions", []):
    if v["name"] == version:
      return v["schema"]["openAPIV3Schema"]
  return None


def unknown_fields(schema: dict, value, path: str = "") -> List[str]:
  """Strict decoding's refusals: the fields no schema declares."""
  found = []
  if isinstance(value, dict) and schema.get("type") == "object":
    if schema.get("x-kubernetes-preserve-unknown-fields"):
      return []
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, item in value.items():
      where = f"{path}.{key}" if path else key
      if props is not None and key in props:
        found += unknown_fields(props[key], item, where)
      elif isinstance(extra, dict):
        found += unknown_fields(extra, item, where)
      elif props is not None and path != "metadata" and key not in ("apiVersion", "kind"):
        found.append(f'unknown field "{where}"')
  elif isinstance(value, list) and isinstance(schema.get("items"), dict):
    for i, item in enumerate(value):
      found += unknown_fields(schema["items"], item, f"{path}[{i}]")
  return found


def invalid(schema: dict, value, path: str = "") -> List[str]:
  """The schema's refusals, in the API server's words."""
  found = []
  if value is None:
    return [] if schema.get("nullable") else [f"{path}: Invalid value: \"null\": {path} in "
                                               f"body must be of type {schema.get('type')}: "
                                               f"\"null\""]
  kind = schema.get("type")
  if schema.get("x-kubernetes-int-or-string"):
    if not isinstance(value, (int, str)) or isinstance(value, bool):
      return [f"{path}: Invalid value: {value!r}: {path} in body must be of type "
              f"integer or string"]
  elif kind and (not isinstance(value, TYPES[kind]) or
                 (kind in ("integer", "number") and isinstance(value, bool))):
    return [f"{path}: Invalid value: \"{type(value).__name__}\": {path} in body must be of "
            f"type {kind}: \"{type(value).__name__}\""]
  if "enum" in schema and value not in schema["enum"]:
    allowed = ", ".join(f'"{v}"' for v in schema["enum"])
    found.append(f"{path}: Unsupported value: \"{value}\": supported values: {allowed}")
  if isinstance(value, dict):
    for name in schema.get("required", []):
      if name not in value:
        found.append(f"{path + '.' if path else ''}{name}: Required value")
    props = schema.get("properties", {})
    for key, item in value.items():
      sub = props.get(key) or (schema.get("additionalProperties")
                               if isinstance(schema.get("additionalProperties"), dict) else None)
      if sub is not None and not (path == "" and key == "metadata"):
        found += invalid(sub, item, f"{path}.{key}" if path else key)
  if isinstance(value, list) and isinstance(schema.get("items"), dict):
    for i, item in enumerate(value):
      found += invalid(schema["items"], item, f"{path}[{i}]")
  return found


SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
CEL_MATCHES = re.compile(r"^self\.metadata\.name\.matches\('(.+)'\)$")
CEL_SIZE = re.compile(r"^size\(self\.metadata\.name\) <= (\d+)$")


def name_problems(schema: Optional[dict], name: str) -> List[str]:
  """Kubernetes' rule for an object's name, then the CRD's CEL rules on it."""
  if not name or len(name) > 253 or not SUBDOMAIN.match(name):
    return [f"metadata.name: Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must "
            f"consist of lower case alphanumeric characters, '-' or '.', and must start and "
            f"end with an alphanumeric character (e.g. 'example.com', regex used for "
            f"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]
  found = []
  for rule in (schema or {}).get("x-kubernetes-validations", []):
    matches, size = CEL_MATCHES.match(rule["rule"]), CEL_SIZE.match(rule["rule"])
    if (matches and not re.search(matches.group(1), name)) or (
        size and len(name) > int(size.group(1))):
      found.append(f"<nil>: Invalid value: \"object\": {rule['message']}")
  return found


LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def label_problems(labels: Dict[str, str]) -> List[str]:
  found = []
  for value in (labels or {}).values():
    if len(value) > 63:
      found.append(f'metadata.labels: Invalid value: "{value}": must be no more than 63 '
                   f'characters')
    elif not LABEL_VALUE.match(value):
      found.append(f'metadata.labels: Invalid value: "{value}": a valid label must be an '
                   f"empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   f"and must start and end with an alphanumeric character (e.g. 'MyValue',  "
                   f"or 'my_value',  or '12345', regex used for validation is "
                   f"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
  return found


def problems(plural: str, release: str, body: Dict) -> Dict[str, List[str]]:
  """{"unknown": strict decoding's refusals, "invalid": the schema's}, or
  empty lists when no CRD file of this release is kept."""
  version = body.get("apiVersion", "").rsplit("/", 1)[-1]
  schema = schema_of(plural, release, version)
  name = body.get("metadata", {}).get("name", "")
  own = label_problems(body.get("metadata", {}).get("labels"))
  if schema is None:
    return {"unknown": [], "invalid": name_problems(None, name) + own}
  return {"unknown": unknown_fields(schema, body),
          "invalid": invalid(schema, body) + name_problems(schema, name) + own}

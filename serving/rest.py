"""The served model's JSON signature, as a REST client meets it.

`serving_default` (trainer/export.py builds it) takes the raw features by the
declaration's names, one JSON value each, as TF Serving's REST API, KServe's
v1 protocol and Vertex AI endpoints send them:

  image        its stored bytes (PNG, JPEG or raw pixels) as {"b64": "..."}.
  numeric      a number, or a list of `length` numbers; an `int` feature
               takes integers only. A missing optional value is NaN (the
               token TF Serving's parser accepts), so an optional feature
               takes numbers of either kind.
  categorical  a string; an `int` category as its decimal digits ("3"),
               which is what the model looks it up by. A missing optional
               value is "__missing__".
  sequence     a list of any length (cut to `max_length`); in a request of
               several instances every list has one length, so shorter ones
               are padded with -1 (int ids) or NaN (float values).

The label is never sent. Every instance carries every feature: TF Serving's
row format refuses an instance whose keys differ from the signature's inputs
(json_tensor.cc, below), and signature defaults apply over gRPC only.

`inputs(decl)` is that contract; `instances` writes a request's instances
from serialized `tf.train.Example`s, as a client would; `decode` reads a
request body back into arrays by TF Serving's own rules. Those rules are
tensorflow/serving 2.20.0's `tensorflow_serving/util/json_tensor.cc`; each
is cited beside the code as `json_tensor.cc:LINE`.
"""

import base64
import binascii
import json
import math
from typing import Dict, Iterable, List

import numpy as np

from dataset.types import Declaration

MISSING_CATEGORY = "__missing__"  # components/transform/preprocessing.py's missing value
NAN = "NaN"  # a float input's missing or padding value, in the contract's JSON
INT_PAD = -1  # an int sequence's padding: ids are >= 0 (dataset/schema.py int_domain)
_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
           "string": object}


class RequestRefused(ValueError):
  """A request TF Serving would refuse, in a line that names the feature."""


def inputs(decl: Declaration) -> Dict[str, dict]:
  """Each input of the JSON signature: `dtype` (float32, float64, int64 or string),
  `shape` (None: any size; the first is the batch) and, where the feature may
  lack a value, `missing` (the value that says so) or `pad`."""
  specs = {}
  for f in decl.features:
    if f.kind == "image":
      spec = {"dtype": "string", "shape": [None], "b64": True}
    elif f.kind == "numeric":
      # An optional int is float64: NaN says missing, and it holds every
      # integer to 2^53 (float32 turned 16777217 into 16777216).
      spec = {"dtype": "float32" if f.dtype != "int" else "int64" if f.required else "float64",
              "shape": [None] if f.length == 1 else [None, f.length]}
      if not f.required:
        spec["missing"] = NAN
    elif f.kind == "categorical":
      spec = {"dtype": "string", "shape": [None]}
      if not f.required:
        spec["missing"] = MISSING_CATEGORY
    else:
      spec = {"dtype": "int64" if f.dtype == "int" else "float32", "shape": [None, None],
              "pad": INT_PAD if f.dtype == "int" else NAN}
    specs[f.name] = spec
  return specs


def _values(feature) -> list:
  kind = feature.WhichOneof("kind")
  return list(getattr(feature, kind).value) if kind else []


def _missing(spec: dict, key: str = "missing"):
  value = spec.get(key)
  return math.nan if value == NAN else value


def _json_string(value: bytes):
  try:
    return value.decode("utf-8")
  except UnicodeDecodeError:  # not UTF-8: TF Serving's bytes form (json_tensor.cc:404-408)
    return {"b64": base64.b64encode(value).decode("ascii")}


def _instance_value(spec: dict, values: list):
  if spec.get("b64"):
    return {"b64": base64.b64encode(values[0] if values else b"").decode("ascii")}
  if len(spec["shape"]) == 2 and spec["shape"][1] is None:
    return list(values)  # a sequence; padded to the batch's longest by `instances`
  if spec["dtype"] == "string":
    if not values:
      return _missing(spec)
    v = values[0]
    return _json_string(v) if isinstance(v, bytes) else str(v)
  width = 1 if len(spec["shape"]) == 1 else spec["shape"][1]
  if not values:
    values = [_missing(spec)] * width
  values = [float(v) if spec["dtype"] == "float32" or (isinstance(v, float) and math.isnan(v))
            else int(v) for v in values]  # an int as a JSON integer: exact
  return values[0] if len(spec["shape"]) == 1 else values


def instances(examples: Iterable[bytes], specs: Dict[str, dict]) -> List[dict]:
  """The row-format instances a client sends for these serialized
  `tf.train.Example`s; a missing optional value as the contract says."""
  from tensorflow.core.example import example_pb2  # the client's only TensorFlow

  rows = []
  for serialized in examples:
    features = example_pb2.Example.FromString(serialized).features.feature
    rows.append({name: _instance_value(spec, _values(features[name]) if name in features
                                       else []) for name, spec in specs.items()})
  for name, spec in specs.items():
    if "pad" in spec:
      # One shape per input across instances (json_tensor.cc:459-469).
      longest = max((len(r[name]) for r in rows), default=0)
      for r in rows:
        r[name] = r[name] + [_missing(spec, "pad")] * (longest - len(r[name]))
  return rows


def request_body(examples: Iterable[bytes], specs: Dict[str, dict]) -> str:
  """A REST predict request's body, as `curl -d` sends it."""
  return json.dumps({"instances": instances(examples, specs)})


# --- TF Serving's side: a request body back into tensors ---------------------

def _shape(value) -> list:
  """A value's dense shape from its first elements (json_tensor.cc:349-356)."""
  shape = []
  while isinstance(value, list):
    shape.append(len(value))
    if not value:
      break
    value = value[0]
  return shape


def _leaf(value, dtype: str, name: str, index: int):
  """One value as the input's dtype, or TF Serving's refusal
  (json_tensor.cc:290-341 AddValueToTensor; 358-389 b64 objects)."""
  where = f"instance {index}, feature {name!r}"
  if dtype == "string":
    if isinstance(value, dict):
      # {"b64": "..."}: exactly one key, a string (json_tensor.cc:358-372).
      if set(value) != {"b64"} or not isinstance(value["b64"], str):
        raise RequestRefused(f"{where}: {json.dumps(value)[:80]} is not formatted "
                             "correctly for base64 data (one key, \"b64\")")
      try:
        return base64.b64decode(value["b64"], validate=True)
      except (binascii.Error, ValueError):
        raise RequestRefused(f"{where}: unable to base64 decode") from None
    if not isinstance(value, str):
      raise RequestRefused(f"{where}: {json.dumps(value)[:80]} is not of expected type: "
                           "string")
    return value.encode("utf-8")
  # rapidjson: a bool is no number; 3.0 is no Int64 (json_tensor.cc:294, 317).
  if isinstance(value, bool) or not isinstance(value, (int, float)) or (
      dtype == "int64" and not isinstance(value, int)):
    kind = "integer" if dtype == "int64" else "number"
    raise RequestRefused(f"{where}: {json.dumps(value)[:80]} is not of expected type: "
                         f"{dtype} (a JSON {kind})")
  return value


def _fill(value, shape: list, level: int, dtype: str, name: str, index: int, out: list):
  """json_tensor.cc:392-436 FillTensorProto: values at the leaf level only,
  each list as long as the shape says."""
  if not isinstance(value, list):
    if level != len(shape):
      raise RequestRefused(f"instance {index}, feature {name!r}: a value found at level "
                           f"{level + 1}, expected at level {len(shape)}")
    out.append(_leaf(value, dtype, name, index))
    return
  if level >= len(shape) or len(value) != shape[level]:
    raise RequestRefused(f"instance {index}, feature {name!r}: a list of {len(value)} at "
                         f"level {level}, expected {shape[level] if level < len(shape) else 'none'}")
  for v in value:
    _fill(v, shape, level + 1, dtype, name, index, out)


def _is_object(value) -> bool:
  """An instance of named features: an object, but not a {"b64": ...} value."""
  return isinstance(value, dict) and set(value) != {"b64"}


def decode(body: str, specs: Dict[str, dict]) -> Dict[str, np.ndarray]:
  """A row-format predict request's tensors, by TF Serving's rules; raises
  RequestRefused naming the instance and the feature."""
  try:
    # NaN and Infinity are accepted (json_tensor.cc:484 kParseNanAndInfFlag).
    doc = json.loads(body)
  except json.JSONDecodeError as e:
    raise RequestRefused(f"JSON Parse error: {e}") from None
  if not isinstance(doc, dict):
    raise RequestRefused("the request is not a JSON object")
  rows = doc.get("instances")
  if not isinstance(rows, list) or not rows:  # json_tensor.cc:676-691
    raise RequestRefused("expected 'instances', a list of at least one object")
  names = set(specs)
  shapes, values = {}, {name: [] for name in specs}
  # One input: an instance may be its value alone (json_tensor.cc:526-536, 574-586).
  plain = len(specs) == 1 and not _is_object(rows[0])
  for index, row in enumerate(rows):
    if plain and not _is_object(row):
      row = {next(iter(specs)): row}
    if not _is_object(row):  # json_tensor.cc:551-555
      raise RequestRefused(f"instance {index}: expected an object of the features "
                           f"{', '.join(sorted(names))}, found {json.dumps(row)[:80]}")
    # Keys equal to the signature's inputs, no more, no fewer (json_tensor.cc:568-573).
    missing, extra = sorted(names - set(row)), sorted(set(row) - names)
    if missing or extra:
      raise RequestRefused(f"instance {index}: " + "; ".join(
          ([f"missing the feature {', '.join(map(repr, missing))} (every instance carries "
            "every input; send the missing value the docs name for an absent one)"]
           if missing else []) +
          ([f"no such feature {', '.join(map(repr, extra))}"] if extra else [])))
    for name, spec in specs.items():
      shape = _shape(row[name])
      if name in shapes and shapes[name] != shape:  # json_tensor.cc:459-469
        raise RequestRefused(f"instance {index}, feature {name!r}: expecting shape "
                             f"{shapes[name]} but got {shape}")
      shapes[name] = shape
      _fill(row[name], shape, 0, spec["dtype"], name, index, values[name])
  tensors = {}
  for name, spec in specs.items():
    # The batch first, then the instances' shape (json_tensor.cc:592-604).
    shape = [len(rows)] + shapes[name]
    declared = spec["shape"][1:]
    if len(shape) - 1 != len(declared) or any(
        d is not None and d != s for d, s in zip(declared, shape[1:])):
      # The signature's TensorSpec refuses it; a line that says so.
      want = "one value" if not declared else f"a list of {declared[0] or 'any number of'}"
      raise RequestRefused(f"feature {name!r}: expected {want} per instance, found "
                           f"shape {shapes[name] or 'a single value'}")
    tensors[name] = np.array(values[name], dtype=_DTYPES[spec["dtype"]]).reshape(shape)
  return tensors

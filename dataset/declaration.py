"""The dataset declaration: one YAML file that says what a dataset's records hold.

This module reads and validates it (`load`, `parse`) into the types of
`dataset/types.py` (the `evaluation:`, `drift:` and `serving:` sections:
`dataset/thresholds.py`), which it re-exports: `declaration.load(path)` gives
a `declaration.Declaration`.

The format is docs/declaration.md's; `dataset/examples/digits.yaml` is the worked
example. Every error names the file, the field, what was expected and what
was found (dataset/fields.py).
"""

import dataclasses
import os
from typing import Any, Mapping

import yaml

from dataset import image_checks, names
from dataset import thresholds as policies
from dataset.categories import categorical
from dataset.fields import MISSING, DeclarationError, FieldReader
from dataset.records.image_bytes import RAW_DTYPES
from dataset.thresholds import Drift, Evaluation
from dataset.tuning import parse_tuning
from dataset.types import (
  BACKBONES,
  COMPRESSIONS,
  ENCODINGS,
  KINDS,
  LABEL_KINDS,
  SPLIT_NAMES,
  Backbone,
  Data,
  Declaration,
  Feature,
  Image,
  Label,
)

__all__ = ["BACKBONES", "COMPRESSIONS", "ENCODINGS", "KINDS", "LABEL_KINDS",
           "SPLIT_NAMES", "Backbone", "Data", "Declaration", "DeclarationError", "Drift",
           "Evaluation", "Feature", "Image", "Label", "is_uri", "load", "parse",
           "resolve"]


def is_uri(path: str) -> bool:
  """True for a filesystem URI such as gs://bucket/dir (TFX's fileio reads those)."""
  return "://" in path


def resolve(base: str, path: str) -> str:
  """`path` relative to the folder `base`; URIs and absolute paths as they are."""
  return path if is_uri(path) else os.path.normpath(os.path.join(base, path))


def _backbone(r: FieldReader, image: Image, node: Any, field: str,
              base: str) -> Backbone:
  node = r.mapping(node, field, ("name", "weights", "frozen_epochs",
                                 "fine_tune_learning_rate"))
  name = r.get(node, field, "name", str, choices=tuple(BACKBONES))
  smallest = BACKBONES[name]
  if min(image.height, image.width) < smallest:
    raise r.fail(field, f"images of at least {smallest}x{smallest} pixels for "
                 f"{name}", f"{image.height}x{image.width}")
  rate = r.get(node, field, "fine_tune_learning_rate", (int, float), 1e-4)
  if not 0 < rate < 1:
    raise r.fail(f"{field}.fine_tune_learning_rate", "a number in (0, 1)", rate)
  if "weights" not in node:
    # Used as loaded (frozen batch-norm statistics), random weights give the
    # same output for every image: nothing learns (trainer/model.py).
    raise r.fail(f"{field}.weights", f"a pretrained weights file (.h5) for {name}: a "
                 "backbone from random weights does not learn here; or drop `backbone:` "
                 "for the built-in CNN", MISSING)
  weights = resolve(base, r.get(node, field, "weights", str))
  if not is_uri(weights) and not os.path.isfile(weights):
    raise r.fail(f"{field}.weights", "an existing weights file (.h5), saved "
                 "beforehand: nothing is downloaded at run time", weights)
  return Backbone(name, weights,
                  frozen_epochs=r.get(node, field, "frozen_epochs", int, 1, minimum=0),
                  fine_tune_learning_rate=float(rate))


def _feature(r: FieldReader, name: str, node: Any, base: str = ".") -> Feature:
  field = f"features.{name}"
  if names.refusal(name):  # before any run: TensorFlow fails on it only at the export
    raise r.fail(field, names.refusal(name), name)
  node = r.mapping(node, field, (
      "kind", "dtype", "length", "encoding", "height", "width", "channels", "raw_dtype",
      "max_length", "vocab_size", "top_k", "num_oov_buckets", "values", "hash_buckets",
      "required", "default", "backbone", "source"))
  kind = r.get(node, field, "kind", str, choices=KINDS)
  feature = dataclasses.replace(_feature_of_kind(r, name, kind, node, field),
                                source=r.get(node, field, "source", str, ""))
  if "backbone" in node:
    if kind != "image":
      raise r.fail(f"{field}.backbone", "no backbone, except on an image feature",
                   node["backbone"])
    feature = dataclasses.replace(feature, image=dataclasses.replace(
        feature.image, backbone=_backbone(r, feature.image, node["backbone"],
                                          f"{field}.backbone", base)))
  required = r.get(node, field, "required", bool, True)
  if kind == "image" and not required:
    raise r.fail(f"{field}.required", "true: an image feature cannot be optional "
                 "(there is no image to fill in)", False)
  default = None
  if "default" in node:
    if kind != "numeric" or required:
      raise r.fail(f"{field}.default", "no default, except on a numeric feature "
                   "with required: false", node["default"])
    default = r.get(node, field, "default", (int, float))
  return dataclasses.replace(feature, required=required,
                             default=None if default is None else float(default))


def _feature_of_kind(r: FieldReader, name: str, kind: str, node: Mapping,
                     field: str) -> Feature:
  if kind == "image":
    encoding = r.get(node, field, "encoding", str, choices=ENCODINGS)
    raw_dtype = r.get(node, field, "raw_dtype", str, "uint8", tuple(RAW_DTYPES))
    return Feature(name, kind, dtype="bytes", image=Image(
        encoding, height=r.get(node, field, "height", int, minimum=1),
        width=r.get(node, field, "width", int, minimum=1),
        channels=r.get(node, field, "channels", int, choices=(1, 3, 4)),
        raw_dtype=raw_dtype))
  if kind == "numeric":
    return Feature(name, kind,
                   dtype=r.get(node, field, "dtype", str, choices=("float", "int")),
                   length=r.get(node, field, "length", int, 1, minimum=1))
  if kind == "categorical":
    return categorical(r, field, name, node)
  dtype = r.get(node, field, "dtype", str, choices=("float", "int"))
  vocab_size = r.get(node, field, "vocab_size", int, 0, minimum=1)
  if dtype == "int" and not vocab_size:
    raise r.fail(f"{field}.vocab_size", "an integer >= 1 for an int sequence",
                 MISSING)
  return Feature(name, kind, dtype=dtype, vocab_size=vocab_size,
                 max_length=r.get(node, field, "max_length", int, minimum=1))


def _data(r: FieldReader, node: Any, base: str) -> Data:
  node = r.mapping(node, "data", (
      "root", "compression", "splits", "pattern", "hash_buckets", "window"))
  root = resolve(base, r.get(node, "data", "root", str))
  window = r.get(node, "data", "window", int, 1, minimum=1)
  compression = r.get(node, "data", "compression", str, "GZIP", COMPRESSIONS)
  if ("splits" in node) == ("pattern" in node):
    raise r.fail("data", "exactly one of 'splits' (pre-split folders) or "
                 "'pattern' (split by hash buckets)", sorted(node))
  if "splits" in node:
    splits = r.mapping(node["splits"], "data.splits", SPLIT_NAMES)
    for split in SPLIT_NAMES:
      r.get(splits, "data.splits", split, str)
    if window > 1 and not all("{SPAN}" in p for p in splits.values()):
      raise r.fail("data.window", "1, unless every split's pattern has {SPAN} "
                   "(a window counts span folders)", window)
    return Data(root, compression, splits=dict(splits), window=window)
  buckets = r.mapping(node.get("hash_buckets", {"train": 4, "eval": 1}),
                      "data.hash_buckets", SPLIT_NAMES)
  for split in SPLIT_NAMES:
    r.get(buckets, "data.hash_buckets", split, int, minimum=1)
  if window > 1:
    raise r.fail("data.window", "1 with 'pattern' (a window of several spans "
                 "needs pre-split train and eval folders: 'splits')", window)
  return Data(root, compression, pattern=r.get(node, "data", "pattern", str),
              hash_buckets=dict(buckets))


def parse(raw: Any, path: str) -> Declaration:
  """Validates a parsed YAML document against the declaration format.

  Args:
    raw: the document, as `yaml.safe_load` returns it.
    path: the file it came from; relative paths inside it are resolved from
      its folder, and every error names it.

  Returns:
    The typed declaration.

  Raises:
    DeclarationError: naming the field, what was expected and what was found.
  """
  r = FieldReader(path)
  base = os.path.dirname(os.path.abspath(path))
  raw = r.mapping(raw, "", ("name", "data", "schema", "label", "features", "evaluation",
                            "drift", "serving", "tuning", "image_checks"))
  name = r.get(raw, "", "name", str)
  if not name.replace("-", "").replace("_", "").isalnum():
    raise r.fail("name", "letters, digits, '-' and '_' only", name)
  label = _label(r, raw.get("label"))
  features_node = r.get(raw, "", "features", dict)
  if not features_node:
    raise r.fail("features", "at least one feature", features_node)
  features = tuple(_feature(r, str(n), f, base) for n, f in features_node.items())
  if label.name in features_node:
    raise r.fail(f"features.{label.name}", "no feature named like the label",
                 "a feature with the label's name")
  schema = r.get(raw, "", "schema", str, None)
  if schema is not None:
    # The schema's text travels inside the pipeline (see CuratedSchema), so
    # it is read here, on the machine that builds the pipeline.
    schema = os.path.normpath(os.path.join(base, schema))
    if not os.path.isfile(schema):
      raise r.fail("schema", "an existing schema file", schema)
  evaluation = policies.evaluation(r, raw.get("evaluation", {}), label, features)
  return Declaration(name=name, path=os.path.abspath(path),
                     data=_data(r, raw.get("data"), base), label=label,
                     features=features, schema=schema, evaluation=evaluation,
                     drift=policies.drift(r, raw.get("drift", {}), features),
                     serving=policies.serving(r, raw.get("serving", {})),
                     tuning=parse_tuning(r, raw.get("tuning"), label, evaluation.metric,
                                         any(f.image.backbone for f in features
                                             if f.kind == "image")),
                     image_checks=image_checks.parse(r, raw.get("image_checks", {})))


def _label(r: FieldReader, node: Any) -> Label:
  node = r.mapping(node, "label", ("name", "num_classes", "classes", "kind", "source"))
  name = r.get(node, "label", "name", str)
  kind = r.get(node, "label", "kind", str, "classes", LABEL_KINDS)
  if kind == "regression":
    for key in ("num_classes", "classes"):
      if key in node:
        raise r.fail(f"label.{key}", "nothing: a regression label has no classes",
                     node[key])
    return Label(name, 0, kind=kind)
  classes = r.get(node, "label", "classes", list, [])
  if not all(isinstance(c, (str, int)) and not isinstance(c, bool) for c in classes):
    raise r.fail("label.classes", "a list of class names", classes)
  classes = tuple(str(c) for c in classes)
  if len(set(classes)) != len(classes):
    raise r.fail("label.classes", "distinct class names", list(classes))
  num_classes = r.get(node, "label", "num_classes", int, len(classes) or ...,
                      minimum=2)
  if classes and len(classes) != num_classes:
    raise r.fail("label.classes", f"{num_classes} names (num_classes)",
                 f"{len(classes)} names")
  return Label(name, num_classes, classes)


def load(path: str) -> Declaration:
  """Reads and validates the declaration at `path` (see `parse`)."""
  try:
    with open(path, encoding="utf-8") as f:
      raw = yaml.safe_load(f)
  except OSError as e:
    raise DeclarationError(f"{path}: cannot read the declaration: {e.strerror}") from None
  except yaml.YAMLError as e:
    raise DeclarationError(f"{path}: not valid YAML: {e}") from None
  return parse(raw, path)

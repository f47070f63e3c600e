"""The dataset declaration: one YAML file that says what a dataset's records hold.

This module is the one home of the dataset contract. Every other module (the
Transform `preprocessing_fn`, the model builder, the input_fn, the serving
signature, the schema writer) reads feature names, kinds and shapes from a
`Declaration`; none of them spells a feature name.

The format, with the bundled digits as the worked example (`datasets/digits.yaml`):

    name: digits
    data:
      root: ../runs/data/digits   # relative to this file, or absolute
      compression: GZIP           # GZIP or NONE
      splits:                     # either pre-split folders ...
        train: train/*
        eval: eval/*
      # ... or one folder split by hash buckets:
      # pattern: "*"
      # hash_buckets: {train: 4, eval: 1}
      # New data as spans: patterns with {SPAN}, e.g. span-{SPAN}/train/*,
      # and how many of the latest spans a run reads (dataset/spans.py):
      # window: 3
    schema: ../schemas/digits.pbtxt   # optional curated schema
    label: {name: label, num_classes: 10}   # or classes: [cat, dog], or kind: regression
    evaluation: {metric: accuracy, threshold: 0.9, max_change: 0.01}   # optional
    features:
      image: {kind: image, encoding: png, height: 8, width: 8, channels: 1}
      # Transfer learning (images of 32x32 or more): a Keras applications
      # backbone and its weights file, frozen for the first epochs:
      # photo: {kind: image, ..., backbone: {name: MobileNetV2,
      #         weights: mobilenet_v2.h5, frozen_epochs: 2,
      #         fine_tune_learning_rate: 0.0001}}
      ink: {kind: numeric, dtype: float, length: 1}
"""

import dataclasses
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

import yaml

from dataset.fields import MISSING, DeclarationError, FieldReader
from records.images import RAW_DTYPES

KINDS = ("image", "numeric", "categorical", "sequence")
ENCODINGS = ("png", "jpeg", "auto", "raw")  # auto: PNG or JPEG, per record
COMPRESSIONS = ("GZIP", "NONE")
SPLIT_NAMES = ("train", "eval")
# Keras applications usable as an image backbone -> their smallest input side.
BACKBONES = {"MobileNetV2": 32, "MobileNetV3Small": 32, "EfficientNetB0": 32}


@dataclasses.dataclass(frozen=True)
class Feature:
  """One declared input feature.

  Attributes:
    name: the key of the feature in `tf.train.Example.features`.
    kind: one of KINDS.
    dtype: `float` or `int` for numeric and sequence features, `string` or
      `int` for categorical ones, `bytes` for images.
    length: number of values of a fixed-length numeric feature.
    encoding: `png`, `jpeg`, `auto` (each record either) or `raw` for images.
    height, width, channels: image size; encoded images are resized to it.
    raw_dtype: element type of raw image bytes, a key of RAW_DTYPES.
    max_length: sequences are padded or cut to this many values.
    vocab_size: int sequences: values are ids in [0, vocab_size).
    top_k: categorical: keep the most frequent values (None keeps all).
    num_oov_buckets: categorical: buckets for values outside the vocabulary.
    required: whether every record has it; if not, Transform fills a missing
      value (see components/preprocessing.py). Images are always required.
    default: numeric, optional: the value for a missing one (default: the
      training mean).
    backbone: image: a Keras applications model (one of BACKBONES) to use
      as the image tower, for transfer learning; "" for the small CNN.
    backbone_weights: its pretrained weights, a local `.h5` file (nothing is
      downloaded); "" starts it from random weights.
    frozen_epochs: the first epochs train with the backbone frozen; the rest
      fine-tune it at `fine_tune_learning_rate`.
    fine_tune_learning_rate: the learning rate once the backbone is unfrozen.
  """
  name: str
  kind: str
  dtype: str = "float"
  length: int = 1
  encoding: Optional[str] = None
  height: int = 0
  width: int = 0
  channels: int = 0
  raw_dtype: str = "uint8"
  max_length: int = 0
  vocab_size: int = 0
  top_k: Optional[int] = None
  num_oov_buckets: int = 1
  required: bool = True
  default: Optional[float] = None
  backbone: str = ""
  backbone_weights: str = ""
  frozen_epochs: int = 0
  fine_tune_learning_rate: float = 0.0

  @property
  def missing_indicator(self) -> Optional[str]:
    """The model input that says a value was missing: optional numerics only."""
    return f"{self.name}__missing" if self.kind == "numeric" and not self.required else None

  @property
  def proto_kind(self) -> str:
    """The `tf.train.Feature` list this feature is stored in."""
    if self.kind == "image" or self.dtype == "string":
      return "bytes_list"
    return "int64_list" if self.dtype == "int" else "float_list"

  @property
  def raw_num_bytes(self) -> int:
    """Exact byte length of one raw image."""
    return self.height * self.width * self.channels * RAW_DTYPES[self.raw_dtype]


LABEL_KINDS = ("classes", "regression")
# metric -> (TFMA/Keras metric class, higher is better); the first of each
# label kind is its default.
METRICS = {"classes": {"accuracy": ("SparseCategoricalAccuracy", True),
                       "auc": ("AUC", True)},
           "regression": {"rmse": ("RootMeanSquaredError", False),
                          "mae": ("MeanAbsoluteError", False)}}


@dataclasses.dataclass(frozen=True)
class Label:
  """The label.

  Attributes:
    name: the label's key in the records.
    num_classes: how many classes (0 for regression).
    classes: class names, by id. The records hold either the ids (int64) or
      the names (bytes); ids are positions in this list, so they never
      change between runs or spans.
    kind: `classes`, or `regression` for a float label.
  """
  name: str
  num_classes: int
  classes: Tuple[str, ...] = ()
  kind: str = "classes"


@dataclasses.dataclass(frozen=True)
class Evaluation:
  """What blesses a model: a metric, its threshold, and the largest change
  for the worse against the served model.

  For metrics where higher is better (accuracy, auc) `threshold` is a lower
  bound and `max_change` the largest drop; for rmse and mae an upper bound
  and the largest rise.
  """
  metric: str = "accuracy"
  threshold: float = 0.9
  max_change: float = 0.01

  @property
  def higher_is_better(self) -> bool:
    return next(m[self.metric][1] for m in METRICS.values() if self.metric in m)


@dataclasses.dataclass(frozen=True)
class Data:
  """Where the records are.

  Attributes:
    root: absolute folder that holds the TFRecords.
    compression: `GZIP` or `NONE`.
    splits: split name -> glob below root, for pre-split data; empty otherwise.
    pattern: glob below root for data that ImportExampleGen splits itself.
    hash_buckets: split name -> number of hash buckets, with `pattern`.
    window: how many of the latest spans a run reads, when the patterns
      have `{SPAN}` (see dataset/spans.py).
  """
  root: str
  compression: str = "GZIP"
  splits: Mapping[str, str] = dataclasses.field(default_factory=dict)
  pattern: str = ""
  hash_buckets: Mapping[str, int] = dataclasses.field(default_factory=dict)
  window: int = 1


@dataclasses.dataclass(frozen=True)
class Declaration:
  """A whole dataset declaration, loaded and validated by `load`."""
  name: str
  path: str
  data: Data
  label: Label
  features: Tuple[Feature, ...]
  schema: Optional[str] = None
  evaluation: Evaluation = Evaluation()

  def of_kind(self, kind: str) -> List[Feature]:
    return [f for f in self.features if f.kind == kind]

  def input_names(self) -> List[str]:
    """The model's inputs: each feature, and the missing-value indicators."""
    names = [f.name for f in self.features]
    return names + [f.missing_indicator for f in self.features if f.missing_indicator]

  def to_dict(self) -> Dict[str, Any]:
    """A JSON-able form of the whole declaration."""
    return dataclasses.asdict(self)

  def contract(self) -> Dict[str, Any]:
    """What Transform and the Trainer need, as JSON: name, label, features.

    Leaves out where the files are (the YAML's path, the data root, the
    schema file): that is the runners' business, it would put the compiling
    machine's paths into a Kubeflow spec, and moving the data must not
    invalidate Transform's and the Trainer's cache. `from_dict` reads it back.
    """
    return {"name": self.name, "path": "", "data": {"root": ""},
            "label": dataclasses.asdict(self.label),
            "features": [dataclasses.asdict(f) for f in self.features],
            "evaluation": dataclasses.asdict(self.evaluation)}

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "Declaration":
    """The inverse of `to_dict`."""
    return cls(
        name=d["name"], path=d["path"], schema=d.get("schema"),
        data=Data(**d["data"]),
        label=Label(**{**d["label"], "classes": tuple(d["label"].get("classes", ()))}),
        features=tuple(Feature(**f) for f in d["features"]),
        evaluation=Evaluation(**d.get("evaluation", {})))


def is_uri(path: str) -> bool:
  """True for a filesystem URI such as gs://bucket/dir (TFX's fileio reads those)."""
  return "://" in path


def resolve(base: str, path: str) -> str:
  """`path` relative to the folder `base`; URIs and absolute paths as they are."""
  return path if is_uri(path) else os.path.normpath(os.path.join(base, path))


def _backbone(r: FieldReader, feature: Feature, node: Any, field: str,
              base: str) -> Feature:
  node = r.mapping(node, field, ("name", "weights", "frozen_epochs",
                                 "fine_tune_learning_rate"))
  name = r.get(node, field, "name", str, choices=tuple(BACKBONES))
  smallest = BACKBONES[name]
  if min(feature.height, feature.width) < smallest:
    raise r.fail(field, f"images of at least {smallest}x{smallest} pixels for "
                 f"{name}", f"{feature.height}x{feature.width}")
  weights = r.get(node, field, "weights", str, "")
  if weights:
    weights = resolve(base, weights)
    if not is_uri(weights) and not os.path.isfile(weights):
      raise r.fail(f"{field}.weights", "an existing weights file (.h5), saved "
                   "beforehand: nothing is downloaded at run time", weights)
  rate = r.get(node, field, "fine_tune_learning_rate", (int, float), 1e-4)
  if not 0 < rate < 1:
    raise r.fail(f"{field}.fine_tune_learning_rate", "a number in (0, 1)", rate)
  return dataclasses.replace(
      feature, backbone=name, backbone_weights=weights,
      frozen_epochs=r.get(node, field, "frozen_epochs", int, 1, minimum=0),
      fine_tune_learning_rate=float(rate))


def _feature(r: FieldReader, name: str, node: Any, base: str = ".") -> Feature:
  field = f"features.{name}"
  node = r.mapping(node, field, (
      "kind", "dtype", "length", "encoding", "height", "width", "channels",
      "raw_dtype", "max_length", "vocab_size", "top_k", "num_oov_buckets",
      "required", "default", "backbone"))
  kind = r.get(node, field, "kind", str, choices=KINDS)
  feature = _feature_of_kind(r, name, kind, node, field)
  if "backbone" in node:
    if kind != "image":
      raise r.fail(f"{field}.backbone", "no backbone, except on an image feature",
                   node["backbone"])
    feature = _backbone(r, feature, node["backbone"], f"{field}.backbone", base)
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
    return Feature(
        name, kind, dtype="bytes", encoding=encoding, raw_dtype=raw_dtype,
        height=r.get(node, field, "height", int, minimum=1),
        width=r.get(node, field, "width", int, minimum=1),
        channels=r.get(node, field, "channels", int, choices=(1, 3, 4)))
  if kind == "numeric":
    return Feature(name, kind,
                   dtype=r.get(node, field, "dtype", str, choices=("float", "int")),
                   length=r.get(node, field, "length", int, 1, minimum=1))
  if kind == "categorical":
    return Feature(name, kind,
                   dtype=r.get(node, field, "dtype", str, choices=("string", "int")),
                   top_k=r.get(node, field, "top_k", int, None, minimum=1),
                   num_oov_buckets=r.get(node, field, "num_oov_buckets", int, 1,
                                         minimum=1))
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
  raw = r.mapping(raw, "", ("name", "data", "schema", "label", "features", "evaluation"))
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
  return Declaration(name=name, path=os.path.abspath(path),
                     data=_data(r, raw.get("data"), base), label=label,
                     features=features, schema=schema,
                     evaluation=_evaluation(r, raw.get("evaluation", {}), label))


def _label(r: FieldReader, node: Any) -> Label:
  node = r.mapping(node, "label", ("name", "num_classes", "classes", "kind"))
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


def _evaluation(r: FieldReader, node: Any, label: Label) -> Evaluation:
  node = r.mapping(node, "evaluation", ("metric", "threshold", "max_change"))
  metrics = METRICS[label.kind]
  metric = r.get(node, "evaluation", "metric", str, next(iter(metrics)), tuple(metrics))
  if metric == "auc" and label.num_classes != 2:
    raise r.fail("evaluation.metric", "accuracy: auc needs exactly 2 classes",
                 f"auc with {label.num_classes} classes")
  if metrics[metric][1]:
    threshold = r.get(node, "evaluation", "threshold", (int, float), 0.9)
  elif "threshold" not in node:
    # An error in the label's own units has no default that fits every dataset.
    raise r.fail("evaluation.threshold", f"a number: the largest {metric} a model "
                 "may have and be blessed (a regression label needs one)", MISSING)
  else:
    threshold = r.get(node, "evaluation", "threshold", (int, float))
  max_change = r.get(node, "evaluation", "max_change", (int, float), 0.01)
  if max_change < 0:
    raise r.fail("evaluation.max_change", "a number >= 0", max_change)
  return Evaluation(metric, float(threshold), float(max_change))


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

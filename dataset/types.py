"""The dataset declaration's types: what `dataset/declaration.py` reads from YAML.

Every other module (the Transform `preprocessing_fn`, the model builder, the
input_fn, the serving signature, the schema writer) reads feature names,
kinds and shapes from a `Declaration`; none of them spells a feature name.
An image feature's settings, and its backbone's, are nested types (`Image`,
`Backbone`), so a numeric feature carries no image fields.
"""

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Tuple

from dataset.records.image_bytes import RAW_DTYPES
from dataset.thresholds import Drift, Evaluation, Serving, drift_from_dict
from dataset.tuning import Tuning

KINDS = ("image", "numeric", "categorical", "sequence")
ENCODINGS = ("png", "jpeg", "auto", "raw")  # auto: PNG or JPEG, per record
COMPRESSIONS = ("GZIP", "NONE")
SPLIT_NAMES = ("train", "eval")
# Keras applications usable as an image backbone -> their smallest input side.
BACKBONES = {"MobileNetV2": 32, "MobileNetV3Small": 32, "EfficientNetB0": 32}


@dataclasses.dataclass(frozen=True)
class Backbone:
  """A Keras applications model as an image feature's tower, for transfer learning.

  Attributes:
    name: one of BACKBONES.
    weights: its pretrained weights, a local `.h5` file (nothing is
      downloaded); "" starts it from random weights.
    frozen_epochs: the first epochs train with the backbone frozen; the rest
      fine-tune it at `fine_tune_learning_rate`.
    fine_tune_learning_rate: the learning rate once the backbone is unfrozen.
  """
  name: str
  weights: str = ""
  frozen_epochs: int = 1
  fine_tune_learning_rate: float = 1e-4


@dataclasses.dataclass(frozen=True)
class Image:
  """What an image feature's bytes are, and the size the model sees.

  Attributes:
    encoding: `png`, `jpeg`, `auto` (each record either) or `raw`.
    height, width, channels: the image size; encoded images are resized to it.
    raw_dtype: element type of raw image bytes, a key of RAW_DTYPES.
    backbone: the pretrained tower, or None for the small CNN.
  """
  encoding: str
  height: int
  width: int
  channels: int
  raw_dtype: str = "uint8"
  backbone: Optional[Backbone] = None

  @property
  def shape(self) -> Tuple[int, int, int]:
    return (self.height, self.width, self.channels)

  @property
  def raw_num_bytes(self) -> int:
    """Exact byte length of one raw image."""
    return self.height * self.width * self.channels * RAW_DTYPES[self.raw_dtype]


@dataclasses.dataclass(frozen=True)
class Feature:
  """One declared input feature.

  Attributes:
    name: the key of the feature in `tf.train.Example.features`.
    kind: one of KINDS.
    dtype: `float` or `int` for numeric and sequence features, `string` or
      `int` for categorical ones, `bytes` for images.
    length: number of values of a fixed-length numeric feature.
    max_length: sequences are padded or cut to this many values.
    vocab_size: int sequences: values are ids in [0, vocab_size).
    values: categorical: the declared values, each its own id for good.
    num_oov_buckets: categorical with `values`: buckets for other values.
    hash_buckets: categorical without `values`: each value's id is its
      hash's bucket. Either way the ids, and so the model's shape, follow
      the declaration and never the data (`id_count`).
    required: whether every record has it; if not, Transform fills a missing
      value (see components/transform/preprocessing.py). Images are always required.
    default: numeric, optional: the value for a missing one (default: the
      training mean).
    image: an image feature's encoding and size; None for the other kinds.
    source: the table column `tfrecords convert` wrote it from, when that
      column's name is not a feature name (dataset/names.py); for the
      reader only, so not in `Declaration.contract` or any cache key.
  """
  name: str
  kind: str
  dtype: str = "float"
  length: int = 1
  max_length: int = 0
  vocab_size: int = 0
  values: Tuple[str, ...] = ()
  num_oov_buckets: int = 1
  hash_buckets: int = 0
  required: bool = True
  default: Optional[float] = None
  image: Optional[Image] = None
  source: str = ""

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "Feature":
    """The inverse of `dataclasses.asdict`."""
    image = d.get("image")
    if image:
      backbone = image.get("backbone")
      image = Image(**{**image, "backbone": Backbone(**backbone) if backbone else None})
    return cls(**{**d, "image": image, "values": tuple(d.get("values", ()))})

  @property
  def id_count(self) -> int:
    """Categorical: the ids the model embeds. The declared values, the
    missing value and the OOV buckets; or the hash buckets. Fixed by the
    declaration, so a category that appears or disappears between spans
    changes no weight's shape, and a warm start holds."""
    if self.values:
      return len(self.values) + 1 + self.num_oov_buckets
    return self.hash_buckets

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

LABEL_KINDS = ("classes", "regression")


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

  def class_names(self) -> List[str]:
    """Each class's name by id: its declared name, else its id; [] for
    regression."""
    if self.kind != "classes":
      return []
    return list(self.classes) or [str(i) for i in range(self.num_classes)]


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
  drift: Drift = Drift()
  serving: Serving = Serving()
  tuning: Optional[Tuning] = None  # dataset/tuning.py
  image_checks: Tuple[Tuple[str, str], ...] = ()  # (kind, decision): dataset/image_checks.py

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
            "features": [{k: v for k, v in dataclasses.asdict(f).items() if k != "source"}
                         for f in self.features],
            "evaluation": dataclasses.asdict(self.evaluation)}

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "Declaration":
    """The inverse of `to_dict`."""
    return cls(
        name=d["name"], path=d["path"], schema=d.get("schema"),
        data=Data(**d["data"]),
        label=Label(**{**d["label"], "classes": tuple(d["label"].get("classes", ()))}),
        features=tuple(Feature.from_dict(f) for f in d["features"]),
        evaluation=Evaluation.from_dict(d.get("evaluation", {})),
        drift=drift_from_dict(d.get("drift")),
        serving=Serving(tuple(tuple(p) for p in (d.get("serving") or {}).get("p99_ms", ()))),
        tuning=Tuning.from_dict(d.get("tuning")),
        image_checks=tuple(tuple(pair) for pair in d.get("image_checks", ())))

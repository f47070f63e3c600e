"""The input benchmark's datasets, generated once into a folder and reused.

  T  26 scalar features (20 float, 5 int64, the int64 label, which 4 of
     them predict): a table
  R  raw uint8 32x32x3 pixels, 2 floats and a label: small images as bytes
  J  224x224 JPEG images and a label: photos

All GZIP, in 8 shards, as ExampleGen and Transform write them (J can be
written uncompressed too, as image datasets often are stored). Each comes
with a `Declaration` (what this project's pipeline reads) and a feature spec
(what the tutorial loop parses: one value per feature, images as bytes).
"""

import dataclasses
import io
import json
import os
from typing import Dict, List

import numpy as np
import tensorflow as tf

from dataset.convert import arrow
from dataset.declaration import Data, Declaration, Feature, Image, Label
from dataset.records.format import frame, open_file

SHARDS = 8
LABELS = 2  # how labels are made: a stamp of another version is rewritten


@dataclasses.dataclass
class BenchData:
  name: str
  files: List[str]
  decl: Declaration
  spec: Dict[str, tf.io.FixedLenFeature]
  count: int
  batch_size: int
  compression: str = "GZIP"


def _declaration(name: str, features) -> Declaration:
  return Declaration(name=name, path="", data=Data(root=""),
                     label=Label("label", 10), features=tuple(features))


def _spec(decl: Declaration) -> dict:
  types = {"bytes_list": tf.string, "int64_list": tf.int64, "float_list": tf.float32}
  spec = {f.name: tf.io.FixedLenFeature([], types[f.proto_kind]) for f in decl.features}
  spec["label"] = tf.io.FixedLenFeature([], tf.int64)
  return spec


FEATURES = {
    "T": ([Feature(f"f{i:02d}", "numeric") for i in range(20)]
          + [Feature(f"i{i}", "numeric", dtype="int") for i in range(5)]),
    "R": [Feature("pixels", "image", dtype="bytes", image=Image("raw", 32, 32, 3)),
          Feature("x0", "numeric"), Feature("x1", "numeric")],
    "J": [Feature("image", "image", dtype="bytes", image=Image("jpeg", 224, 224, 3))],
}
BATCH_SIZES = {"T": 256, "R": 256, "J": 64}


def _jpegs(n, rng) -> list:
  from PIL import Image
  base = rng.integers(0, 255, (28, 28, 3), dtype=np.uint8)
  encoded = []
  for i in range(n):
    # Smooth, photo-like content, so each JPEG is the size a photo's is.
    small = np.roll(base, i, axis=1) ^ np.uint8(i % 251)
    buf = io.BytesIO()
    Image.fromarray(small).resize((224, 224), Image.BILINEAR).save(
        buf, format="JPEG", quality=90)
    encoded.append(buf.getvalue())
  return encoded


def _values(f: Feature, n: int, rng):
  """n random values of feature f."""
  if f.kind == "image" and f.image.encoding == "raw":
    pixels = rng.integers(0, 256, (n, f.image.raw_num_bytes), dtype=np.uint8)
    return [p.tobytes() for p in pixels]
  if f.kind == "image":
    return _jpegs(n, rng)
  if f.dtype == "int":
    return rng.integers(0, 100, n)
  return rng.normal(size=n).astype(np.float32)


def _column(f: Feature, values):
  if f.kind == "image":
    return arrow.bytes_column(values)
  return arrow.list_column(values)


def _label(name: str, values, rng):
  """T's label is learnable (a noisy linear score cut into 10 equal
  classes), so that the end-to-end benchmark's accuracy means something;
  the others' labels are random."""
  n = len(next(iter(values.values())))
  if name != "T":
    return rng.integers(0, 10, n)
  score = (values["f00"] + 0.8 * values["f01"] - 0.6 * values["f02"]
           + (values["i0"] - 50) / 50 + rng.normal(scale=0.3, size=n))
  return np.searchsorted(np.quantile(score, np.linspace(0.1, 0.9, 9)), score)


def _suffix(compression: str) -> str:
  # tfx_bsl's factory tells GZIP files by this suffix, as TFX names them.
  return ".gz" if compression == "GZIP" else ".tfrecord"


def generate(folder: str, name: str, count: int,
             compression: str = "GZIP") -> BenchData:
  """The dataset `name` (T, R or J) of `count` records in folder/name.

  Written once; a folder whose stamp says otherwise is written again.
  """
  out = os.path.join(folder, name if compression == "GZIP" else f"{name}-{compression}")
  stamp = os.path.join(out, "stamp.json")
  written = None
  if os.path.exists(stamp):
    with open(stamp) as f:
      written = json.load(f)
  if written != {"count": count, "labels": LABELS}:
    rng = np.random.default_rng(0)
    values = {f.name: _values(f, count, rng) for f in FEATURES[name]}
    columns = {f.name: _column(f, values[f.name]) for f in FEATURES[name]}
    columns["label"] = arrow.list_column(_label(name, values, rng))
    records = arrow.encode(arrow.record_batch(columns))
    os.makedirs(out, exist_ok=True)
    for shard in range(SHARDS):
      with open_file(os.path.join(out, f"part-{shard:05d}{_suffix(compression)}"),
                     "wb", compression) as f:
        f.write(b"".join(frame(r) for r in records[shard::SHARDS]))
    with open(stamp, "w") as f:
      json.dump({"count": count, "labels": LABELS}, f)
  decl = _declaration(name, FEATURES[name])
  files = sorted(os.path.join(out, f) for f in os.listdir(out)
                 if f.endswith(_suffix(compression)))
  return BenchData(name, files, decl, _spec(decl), count, BATCH_SIZES[name],
                   compression)


def declaration_file(data: BenchData, path: str) -> str:
  """Writes the YAML declaration of `data` for the pipeline to `path`:
  every file under one pattern, split 4:1 by hash as ImportExampleGen splits."""
  import yaml
  features = {}
  for f in data.decl.features:
    if f.kind == "image":
      features[f.name] = {"kind": "image", "encoding": f.image.encoding,
                          "height": f.image.height, "width": f.image.width,
                          "channels": f.image.channels}
    else:
      features[f.name] = {"kind": "numeric", "dtype": f.dtype}
  doc = {"name": f"bench-{data.name.lower()}",
         "data": {"root": os.path.abspath(os.path.dirname(data.files[0])),
                  "compression": "GZIP",
                  "pattern": "*.gz", "hash_buckets": {"train": 4, "eval": 1}},
         "label": {"name": "label", "num_classes": 10}, "features": features}
  with open(path, "w") as f:
    yaml.safe_dump(doc, f)
  return path

"""The input benchmark's datasets, generated once into a folder and reused.

  T  26 scalar features (20 float, 5 int64, the int64 label): a table
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

from convert import arrow
from dataset.declaration import Data, Declaration, Feature, Label
from records.format import frame, open_file

SHARDS = 8


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


def _table(n, rng):
  features = ([Feature(f"f{i:02d}", "numeric") for i in range(20)]
              + [Feature(f"i{i}", "numeric", dtype="int") for i in range(5)])
  columns = {f.name: arrow.list_column(rng.normal(size=n).astype(np.float32)
                                       if f.dtype == "float" else rng.integers(0, 100, n))
             for f in features}
  return features, columns


def _raw_images(n, rng):
  features = [Feature("pixels", "image", dtype="bytes", encoding="raw", height=32,
                      width=32, channels=3),
              Feature("x0", "numeric"), Feature("x1", "numeric")]
  pixels = rng.integers(0, 256, (n, 32 * 32 * 3), dtype=np.uint8)
  return features, {"pixels": arrow.bytes_column([p.tobytes() for p in pixels]),
                    "x0": arrow.list_column(rng.normal(size=n).astype(np.float32)),
                    "x1": arrow.list_column(rng.normal(size=n).astype(np.float32))}


def _jpegs(n, rng):
  from PIL import Image
  features = [Feature("image", "image", dtype="bytes", encoding="jpeg", height=224,
                      width=224, channels=3)]
  base = rng.integers(0, 255, (28, 28, 3), dtype=np.uint8)
  encoded = []
  for i in range(n):
    # Smooth, photo-like content, so each JPEG is the size a photo's is.
    small = np.roll(base, i, axis=1) ^ np.uint8(i % 251)
    buf = io.BytesIO()
    Image.fromarray(small).resize((224, 224), Image.BILINEAR).save(
        buf, format="JPEG", quality=90)
    encoded.append(buf.getvalue())
  return features, {"image": arrow.bytes_column(encoded)}


def _suffix(compression: str) -> str:
  # tfx_bsl's factory tells GZIP files by this suffix, as TFX names them.
  return ".gz" if compression == "GZIP" else ".tfrecord"


MAKERS = {"T": (_table, 256), "R": (_raw_images, 256), "J": (_jpegs, 64)}


def generate(folder: str, name: str, count: int,
             compression: str = "GZIP") -> BenchData:
  """The dataset `name` (T, R or J) of `count` records in folder/name.

  Written once; a folder whose stamp says otherwise is written again.
  """
  make, batch_size = MAKERS[name]
  out = os.path.join(folder, name if compression == "GZIP" else f"{name}-{compression}")
  stamp = os.path.join(out, "stamp.json")
  rng = np.random.default_rng(0)
  features, columns = make(min(count, 64), rng)  # the features, cheaply
  if not (os.path.exists(stamp) and json.load(open(stamp)) == {"count": count}):
    features, columns = make(count, rng)
    columns["label"] = arrow.list_column(rng.integers(0, 10, count))
    records = arrow.encode(arrow.record_batch(columns))
    os.makedirs(out, exist_ok=True)
    for shard in range(SHARDS):
      with open_file(os.path.join(out, f"part-{shard:05d}{_suffix(compression)}"),
                     "wb", compression) as f:
        f.write(b"".join(frame(r) for r in records[shard::SHARDS]))
    with open(stamp, "w") as f:
      json.dump({"count": count}, f)
  decl = _declaration(name, features)
  files = sorted(os.path.join(out, f) for f in os.listdir(out)
                 if f.endswith(_suffix(compression)))
  return BenchData(name, files, decl, _spec(decl), count, batch_size, compression)

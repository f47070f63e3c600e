"""The bundled default data: scikit-learn's handwritten digits as TFRecords.

1,797 8x8 grayscale images in 10 classes. Each record holds the image as PNG
bytes, its int64 label, and metadata derived from the image, one feature of
every declared kind, so that the worked example exercises the whole format:

  ink          numeric float   fraction of pixels with any ink
  brightness   numeric float   mean pixel value, in [0, 1]
  shape        categorical     bounding box of the ink: tall, wide or square
  row_ink      sequence int    ink pixels per non-empty row (1 to 8 values)

`datasets/digits.yaml` declares exactly this layout.
"""

import hashlib
import io
import os
from typing import Dict, List

import numpy as np
from PIL import Image

from dataset import shards

EVAL_PERCENT = 20
NUM_SHARDS = 2


def _png(pixels: np.ndarray) -> bytes:
  buf = io.BytesIO()
  Image.fromarray(pixels, mode="L").save(buf, format="PNG")
  return buf.getvalue()


def _shape(pixels: np.ndarray) -> str:
  rows = np.flatnonzero(pixels.any(axis=1))
  cols = np.flatnonzero(pixels.any(axis=0))
  height, width = rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1
  if height > width + 1:
    return "tall"
  return "wide" if width > height + 1 else "square"


def digit_features(pixels: np.ndarray, label: int) -> Dict[str, list]:
  """The feature values of one digit, from its 8x8 uint8 pixels (0-255)."""
  row_ink = (pixels > 0).sum(axis=1)
  return {
      "image": [_png(pixels)],
      "label": [int(label)],
      "ink": [float((pixels > 0).mean())],
      "brightness": [float(pixels.mean() / 255.0)],
      "shape": [_shape(pixels).encode()],
      "row_ink": [int(v) for v in row_ink[row_ink > 0]],
  }


def split_of(key: str) -> str:
  """A stable train/eval split: the same key lands in the same split on every run."""
  bucket = int(hashlib.sha256(key.encode()).hexdigest(), 16) % 100
  return "eval" if bucket < EVAL_PERCENT else "train"


def write_digits(out_dir: str) -> Dict[str, List[str]]:
  """Writes the digits as GZIP TFRecord shards under out_dir/{train,eval}/.

  Returns:
    split -> the shard paths written.
  """
  from sklearn.datasets import load_digits  # only this writer needs sklearn
  digits = load_digits()
  # The data holds 0-16 per pixel; scale to the 0-255 that real images use.
  images = np.round(digits.images * (255.0 / 16.0)).astype(np.uint8)
  rows = {"train": [], "eval": []}
  for i, (pixels, label) in enumerate(zip(images, digits.target)):
    rows[split_of(f"digits-{i}")].append(digit_features(pixels, label))
  return {
      split: shards.write_examples(
          examples, os.path.join(out_dir, split), prefix="digits",
          num_shards=NUM_SHARDS, compression="GZIP")
      for split, examples in rows.items()
  }

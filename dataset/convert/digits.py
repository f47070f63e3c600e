"""The bundled default data: scikit-learn's handwritten digits as TFRecords.

1,797 8x8 grayscale images in 10 classes. Each record holds the image as PNG
bytes, its int64 label, and metadata derived from the image, one feature of
every declared kind, so that the worked example exercises the whole format:

  ink          numeric float   fraction of pixels with any ink
  brightness   numeric float   mean pixel value, in [0, 1]
  shape        categorical     bounding box of the ink: tall, wide or square
  row_ink      sequence int    dark pixels (> 127) in each row that has any:
                               1 to 8 values, as many as the digit is tall

`dataset/examples/digits.yaml` declares exactly this layout.
"""

import io
from typing import Dict, Tuple

import numpy as np
from PIL import Image

from dataset.convert.rows import write_rows
from dataset.convert.writer import Result

EVAL_PERCENT = 20
SHARD_MB = 0.15  # small shards, so the worked example is sharded like real data


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
  row_ink = (pixels > 127).sum(axis=1)
  return {
      "image": [_png(pixels)],
      "label": [int(label)],
      "ink": [float((pixels > 0).mean())],
      "brightness": [float(pixels.mean() / 255.0)],
      "shape": [_shape(pixels).encode()],
      "row_ink": [int(v) for v in row_ink[row_ink > 0]] or [0],
  }


def load_images() -> Tuple[np.ndarray, np.ndarray]:
  """scikit-learn's digits as (uint8 [1797, 8, 8] images, int labels)."""
  from sklearn.datasets import load_digits  # only the bundled data needs sklearn
  digits = load_digits()
  # The data holds 0-16 per pixel; scale to the 0-255 that real images use.
  return np.round(digits.images * (255.0 / 16.0)).astype(np.uint8), digits.target


def write_digits(out_dir: str) -> Result:
  """Writes the digits as GZIP TFRecord shards under out_dir/{train,eval}/.

  The same code as `tfrecords convert` writes them: 20% go to eval by a
  stable hash of `digits-<index>`.
  """
  rows = [digit_features(pixels, label) for pixels, label in zip(*load_images())]
  return write_rows(rows, out_dir, prefix="digits", eval_percent=EVAL_PERCENT,
                    keys=[f"digits-{i}" for i in range(len(rows))], shard_mb=SHARD_MB)

"""What the report shows of an image dataset: a few eval images of each class,
and the eval images the candidate got most confidently wrong.

Written by the Evaluator beside TFMA's output (`SAMPLES`), so it is cached
with the evaluation and the report only reads it. The candidate answers
through its own `serving_examples`, as a gRPC client's request would reach it, on
at most `READ` eval examples; each image is cut down to a thumbnail of at
most `THUMBNAIL` pixels a side (small images are scaled up to it, pixel for
pixel) and stored as PNG, so the report stays one self-contained file.
"""

import base64
import json
import os
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf
from tfx.dsl.io import fileio

from dataset.types import Feature
from trainer import image_decoding as images
from trainer.export import OUTPUT_KEY, examples_signature

SAMPLES = "image_samples.json"  # in the Evaluator's output folder
READ = 1024  # eval examples the candidate answers, at most
PER_CLASS, WRONG = 4, 12
THUMBNAIL = 64


def write(folder: str, model_dir: str, eval_files: Sequence[str], image: Feature,
          label: str, classes: Sequence[str]) -> dict:
  """Picks the samples and writes them to `folder`/SAMPLES; returns them:
  {"feature", "per_class": [{"class", "images": [png base64]}], "wrong":
  [{"image", "true", "predicted", "confidence"}]}."""
  files = sorted(f for pattern in eval_files for f in tf.io.gfile.glob(pattern))
  records = [r.numpy() for r in
             tf.data.TFRecordDataset(files, compression_type="GZIP").take(READ)]
  found = {"feature": image.name, "examples": len(records), "per_class": [], "wrong": []}
  if records:
    signatures = tf.saved_model.load(model_dir).signatures
    serve = signatures[examples_signature(signatures)]
    probabilities = np.concatenate([
        serve(examples=tf.constant(records[i:i + 256]))[OUTPUT_KEY].numpy()
        for i in range(0, len(records), 256)])
    examples = [tf.train.Example.FromString(r).features.feature for r in records]
    truth = np.array([class_id(e[label], classes) for e in examples])
    found.update(choose(truth, probabilities, lambda i: thumbnail(
        tf.constant(examples[i][image.name].bytes_list.value[0]), image), classes))
  fileio.makedirs(folder)
  with fileio.open(os.path.join(folder, SAMPLES), "w") as f:
    f.write(json.dumps(found))
  return found


def class_id(value, classes: Sequence[str]) -> int:
  """A record's label as a class id: stored as the id, or as the class's
  name (dataset/types.py Label); -1 for a name not declared."""
  if value.int64_list.value:
    return int(value.int64_list.value[0])
  name = value.bytes_list.value[0].decode() if value.bytes_list.value else ""
  return list(classes).index(name) if name in classes else -1


def choose(truth: np.ndarray, probabilities: np.ndarray, picture, classes) -> dict:
  """The first PER_CLASS examples of each class, and the WRONG wrong answers
  given with the highest probability; `picture(i)` is example i's thumbnail."""
  predicted = probabilities.argmax(axis=1)
  per_class = [{"class": str(name),
                "images": [picture(i) for i in np.flatnonzero(truth == c)[:PER_CLASS]]}
               for c, name in enumerate(classes)]
  wrong = np.flatnonzero((predicted != truth) & (truth >= 0))
  confidence = probabilities[np.arange(len(truth)), predicted]
  worst = wrong[np.argsort(-confidence[wrong], kind="stable")][:WRONG]
  return {"per_class": per_class,
          "wrong": [{"image": picture(i), "true": str(classes[truth[i]]),
                     "predicted": str(classes[predicted[i]]),
                     "confidence": round(float(confidence[i]), 4)} for i in worst]}


def thumbnail(value: tf.Tensor, image: Feature) -> str:
  """One stored image (PNG/JPEG bytes or raw pixels) as a PNG thumbnail, base64."""
  if image.image.encoding == "raw":
    pixels = images.decode_raw(value[None], image)[0]
  else:
    pixels = images.decode_image(value, image)
  pixels = tf.cast(pixels, tf.float32)
  if images.pixel_dtype(image) != tf.uint8:
    # Raw floats or wider ints: stretched to 0-255 for the eye.
    low, high = tf.reduce_min(pixels), tf.reduce_max(pixels)
    pixels = (pixels - low) / tf.maximum(high - low, 1e-6) * 255.0
  height, width = image.image.height, image.image.width
  scale = THUMBNAIL / max(height, width)
  size = [max(1, round(height * scale)), max(1, round(width * scale))]
  method = "nearest" if scale > 1 else "area"
  pixels = tf.image.resize(pixels, size, method=method)
  if image.image.channels == 4:
    pixels = pixels[..., :3]
  png = tf.io.encode_png(tf.cast(tf.clip_by_value(tf.round(pixels), 0, 255), tf.uint8))
  return base64.b64encode(png.numpy()).decode("ascii")


def read(folder: str) -> Optional[dict]:
  """`write`'s samples from an Evaluator's output folder; None if it wrote none."""
  path = os.path.join(folder, SAMPLES)
  if not fileio.exists(path):
    return None
  with fileio.open(path) as f:
    return json.loads(f.read())


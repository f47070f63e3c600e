"""The photos benchmark's data: JPEG files in a folder per class, converted
as a user converts theirs (`tfrecords convert images`).

Each image is a crop of one of scikit-learn's two sample photos (a temple
in China, a flower; 640x427 each), taken from one quadrant of it, at a
random place and size (a third to all of the quadrant's height), resized to
SIZE x SIZE and saved as a JPEG at quality 90: 2 photos x 4 quadrants = 8
classes of real photographic content that a small CNN learns but does not
learn at once. Written once into a folder and reused; a folder whose stamp
says otherwise is written again.
"""

import io
import json
import os

import numpy as np

CLASSES = 8
SIZE = 96
PHOTOS = ("china", "flower")
QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")
EVAL_PERCENT = 20


def _crops(count: int, size: int, rng) -> list:
  """(class, JPEG bytes) for `count` crops, classes in turn."""
  from PIL import Image
  from sklearn.datasets import load_sample_images
  photos = load_sample_images().images
  out = []
  for i in range(count):
    label = i % CLASSES
    photo = photos[label // 4]
    h, w = photo.shape[0] // 2, photo.shape[1] // 2
    top, left = (label % 4) // 2 * h, (label % 2) * w
    side = int(rng.integers(h // 3, h + 1))
    y = top + int(rng.integers(0, h - side + 1))
    x = left + int(rng.integers(0, w - side + 1))
    crop = Image.fromarray(photo[y:y + side, x:x + side]).resize((size, size),
                                                                 Image.BILINEAR)
    buf = io.BytesIO()
    crop.save(buf, format="JPEG", quality=90)
    out.append((label, buf.getvalue()))
  return out


def generate(folder: str, count: int, size: int = SIZE) -> str:
  """`count` photos converted into folder/photos-<count>-<size>/records
  (train/, eval/ and dataset.yaml, as convert writes them); that folder.
  The JPEG files stay beside it, in jpeg/."""
  root = os.path.join(os.path.abspath(folder), f"photos-{count}-{size}")
  jpegs, records = os.path.join(root, "jpeg"), os.path.join(root, "records")
  stamp = os.path.join(root, "stamp.json")
  wanted = {"count": count, "size": size, "classes": CLASSES, "eval_percent": EVAL_PERCENT,
            "names": 2, "shuffled": True}
  if os.path.exists(stamp):
    with open(stamp) as f:
      if json.load(f) == wanted:
        return records
  import shutil
  shutil.rmtree(root, ignore_errors=True)
  rng = np.random.default_rng(0)
  for i, (label, data) in enumerate(_crops(count, size, rng)):
    name = f"{PHOTOS[label // 4]}-{QUADRANTS[label % 4]}"
    path = os.path.join(jpegs, name, f"{i:06d}.jpg")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
      f.write(data)
  from commands.tfrecords import main as tfrecords
  code = tfrecords.main(["convert", "images", jpegs, "--output", records,
                         "--name", "photos", "--eval-percent", str(EVAL_PERCENT)])
  if code != 0:
    raise SystemExit(f"tfrecords convert images {jpegs} failed (exit {code})")
  with open(stamp, "w") as f:
    json.dump(wanted, f)
  return records

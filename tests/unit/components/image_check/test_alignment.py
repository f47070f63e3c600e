"""The same picture or not (components/image_check/alignment.py): a copy
cropped, resized or brightened aligns onto its original; another hand's
digit does not."""

import numpy as np

from components.image_check import alignment
from components.image_check.fingerprint import THUMB, fingerprint
from dataset.types import Image
from tests.planted_images import VARIANTS, encode, picture

JPEG = Image("jpeg", 96, 96, 3)


def _levels(data: bytes) -> np.ndarray:
  return np.frombuffer(fingerprint(data, JPEG).thumb, np.uint8).reshape(THUMB, THUMB)


def test_each_kind_of_copy_is_the_same_picture():
  originals, copies = [], []
  for seed in range(20):
    image = picture(seed)
    for variant in ("quality60", "resized90", "cropped4", "brightened10"):
      originals.append(_levels(encode(image)))
      copies.append(_levels(VARIANTS[variant](image, None)))
  same = alignment.same_picture(np.array(originals), np.array(copies))
  assert same.mean() >= 0.9, same.reshape(20, 4).mean(axis=0)
  # Either way round: the crop is found as a window of its original.
  assert alignment.same_picture(np.array(copies), np.array(originals)).mean() >= 0.9


def test_two_hands_digits_are_other_pictures():
  """The two closest of 600 distinct digits at 28x28 (8x8 thumbnails that
  correlate 0.99) stay apart."""
  from tests.distinct_images import digits
  levels = np.array([_levels(data) for _, data in digits(600)])
  coarse = levels.reshape(-1, 8, 4, 8, 4).mean(axis=(2, 4)).reshape(-1, 64)
  coarse = coarse - coarse.mean(axis=1, keepdims=True)
  coarse /= np.linalg.norm(coarse, axis=1, keepdims=True)
  alike = coarse @ coarse.T - 2 * np.eye(len(coarse))
  i, j = np.unravel_index(np.argmax(alike), alike.shape)
  assert alike[i, j] > 0.99, alike[i, j]
  assert not alignment.same_picture(levels[[i]], levels[[j]])[0]

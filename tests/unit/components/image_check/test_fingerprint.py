"""One image's fingerprint (components/image_check/fingerprint.py), from each
kind of stored image: PNG, JPEG, raw uint8 and raw float pixels."""

import numpy as np
import pytest

from components.image_check.fingerprint import NotAnImage, fingerprint, hamming
from dataset.types import Image
from tests.planted_images import encode, picture


def test_the_same_picture_stored_raw_or_as_png_has_the_same_hash():
  pixels = np.asarray(picture(7))
  png = fingerprint(encode(picture(7), "PNG"), Image("png", 96, 96, 3))
  raw = fingerprint(pixels.tobytes(), Image("raw", 96, 96, 3))
  floats = fingerprint((pixels / 255.0).astype(np.float32).tobytes(),
                       Image("raw", 96, 96, 3, raw_dtype="float32"))
  assert png.phash == raw.phash and hamming(raw.phash, floats.phash) <= 2
  assert (raw.height, raw.width, raw.channels) == (96, 96, 3)
  assert png.digest != raw.digest  # different bytes: not exact copies


@pytest.mark.parametrize("data, image, message", [
    (b"\x00" * 10, Image("raw", 4, 4, 1), "expected 16 bytes of raw uint8 pixels, found 10"),
    (b"GIF89a....", Image("jpeg", 4, 4, 3), "expected PNG or JPEG bytes"),
    (b"\xff\xd8\xff\xe0 cut short", Image("jpeg", 4, 4, 3), "does not decode"),
])
def test_bytes_that_are_not_the_declared_image_are_named(data, image, message):
  with pytest.raises(NotAnImage, match=message):
    fingerprint(data, image)


def test_a_png_with_alpha_keeps_its_four_channels():
  """An RGBA PNG declared with 4 channels is as declared (it was read as
  RGB and flagged odd_size); under 3 declared channels it differs."""
  from components.image_check.findings import Item, quality_kinds
  rgba = picture(3).convert("RGBA")
  found = fingerprint(encode(rgba, "PNG"), Image("png", 96, 96, 4))
  assert found.channels == 4, found
  item = Item("train", "f", 0, "0", found)
  assert "odd_size" not in quality_kinds(item, Image("png", 96, 96, 4))
  assert "odd_size" in quality_kinds(item, Image("png", 96, 96, 3))

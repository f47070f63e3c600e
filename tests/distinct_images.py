"""Real pictures that hold no copies, by family, for the image check's
false pairs (tests/unit/components/image_check/, bench/image_check_bench.py):
scikit-learn's handwritten digits at MNIST's size, tiles of its two sample
photos, generated icons and generated scans of text. Each is a list of
(label, PNG or JPEG bytes), no two pictures the same."""

import io
from typing import Callable, Dict, List, Tuple

import numpy as np

Pictures = List[Tuple[str, bytes]]


def _encode(image, fmt: str = "PNG", quality: int = 90) -> bytes:
  out = io.BytesIO()
  image.save(out, format=fmt, **({"quality": quality} if fmt == "JPEG" else {}))
  return out.getvalue()


def digits(count: int = 600, side: int = 28, mixed: bool = False) -> Pictures:
  """The first `count` of scikit-learn's digits whose 8x8 arrays differ,
  scaled up to `side` pixels (bilinear), as PNG, or every other one as a
  JPEG (`mixed`)."""
  from PIL import Image
  from sklearn.datasets import load_digits
  loaded = load_digits()
  seen, out = set(), []
  for pixels, label in zip(loaded.images, loaded.target):
    if pixels.tobytes() in seen:
      continue
    seen.add(pixels.tobytes())
    image = Image.fromarray(np.round(pixels * 255 / 16).astype(np.uint8)).resize(
        (side, side), Image.BILINEAR)
    out.append((str(label), _encode(image, "JPEG" if mixed and len(out) % 2 else "PNG")))
    if len(out) == count:
      return out
  raise ValueError(f"only {len(out)} distinct digits")


def photo_tiles(sides=(40, 64)) -> Pictures:
  """scikit-learn's two sample photos (640x427) cut into tiles that do not
  overlap, for each side, as JPEGs: 440 for the default sides."""
  from PIL import Image
  from sklearn.datasets import load_sample_images
  out = []
  for number, photo in enumerate(load_sample_images().images):
    for side in sides:
      for y in range(0, photo.shape[0] - side + 1, side):
        for x in range(0, photo.shape[1] - side + 1, side):
          out.append((str(number), _encode(Image.fromarray(photo[y:y + side, x:x + side]),
                                           "JPEG")))
  return out


def icons(count: int = 600, side: int = 32, seed: int = 0) -> Pictures:
  """One to three flat shapes (ellipse, rectangle, triangle) on a light
  background, as PNGs."""
  from PIL import Image, ImageDraw
  rng = np.random.default_rng(seed)
  out = []
  for index in range(count):
    image = Image.new("RGB", (side, side), tuple(int(c) for c in rng.integers(200, 256, 3)))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(1, 4))):
      x0, y0 = (int(v) for v in rng.integers(0, side - 8, 2))
      w, h = (int(v) for v in rng.integers(6, side // 2 + 4, 2))
      color = tuple(int(c) for c in rng.integers(0, 180, 3))
      shape = int(rng.integers(0, 3))
      if shape == 2:
        draw.polygon([(x0, y0 + h), (x0 + w // 2, y0), (x0 + w, y0 + h)], fill=color)
      else:
        (draw.ellipse if shape else draw.rectangle)([x0, y0, x0 + w, y0 + h], fill=color)
    out.append((str(index % 5), _encode(image)))
  return out


def scans(count: int = 600, seed: int = 1) -> Pictures:
  """Three lines of random words on paper, with the sensor's noise, as
  96x48 gray JPEGs."""
  from PIL import Image, ImageDraw
  rng = np.random.default_rng(seed)
  letters = list("abcdefghijklmnopqrstuvwxyz")
  out = []
  for index in range(count):
    image = Image.new("L", (96, 48), 235)
    draw = ImageDraw.Draw(image)
    for line in range(3):
      words = " ".join("".join(rng.choice(letters, int(rng.integers(2, 7)))) for _ in range(3))
      draw.text((int(rng.integers(1, 6)), 2 + 15 * line + int(rng.integers(0, 3))), words,
                fill=int(rng.integers(0, 60)))
    noisy = np.asarray(image, np.float32) + rng.normal(0, 6, (48, 96))
    out.append((str(index % 4), _encode(Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)),
                                        "JPEG", 85)))
  return out


FAMILIES: Dict[str, Callable[[], Pictures]] = {
    "digits 28x28 PNG": lambda: digits(600, 28),
    "digits 32x32 PNG/JPEG": lambda: digits(600, 32, mixed=True),
    "photo tiles": photo_tiles,
    "icons 32x32": icons,
    "scans 96x48": scans,
}

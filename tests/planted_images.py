"""Images a test makes, with problems planted where it knows them: distinct
pictures (smooth color fields with shapes and edges, each from its own
seed), and copies of them re-encoded, resized, cropped or brightened, as
JPEG or PNG bytes."""

import io
from typing import Callable, Dict

import numpy as np

SIZE = 96


def picture(seed: int, size: int = SIZE):
  """A distinct picture: a smooth random color field with a few shapes on it."""
  from PIL import Image, ImageDraw
  rng = np.random.default_rng(seed)
  coarse = rng.uniform(0, 255, (5, 5, 3)).astype(np.uint8)
  image = Image.fromarray(coarse).resize((size, size), Image.BICUBIC)
  draw = ImageDraw.Draw(image)
  span = max(size // 6, 2)
  for _ in range(4):
    x0, y0 = rng.integers(0, size - span, 2)
    x1, y1 = x0 + rng.integers(span // 2, 3 * span), y0 + rng.integers(span // 2, 3 * span)
    color = tuple(int(c) for c in rng.integers(0, 256, 3))
    (draw.ellipse if rng.random() < 0.5 else draw.rectangle)([x0, y0, x1, y1], fill=color)
  return image


def encode(image, fmt: str = "JPEG", quality: int = 95) -> bytes:
  out = io.BytesIO()
  image.save(out, format=fmt, **({"quality": quality} if fmt == "JPEG" else {}))
  return out.getvalue()


def _resized(image):
  side = round(image.width * 0.9)
  return image.resize((side, side))


def _brightened(image):
  from PIL import ImageEnhance
  return ImageEnhance.Brightness(image).enhance(1.1)


# variant -> (the copy's bytes from the original picture and its bytes)
VARIANTS: Dict[str, Callable] = {
    "exact": lambda image, data: data,
    "quality60": lambda image, data: encode(image, quality=60),
    "resized90": lambda image, data: encode(_resized(image)),
    "cropped4": lambda image, data: encode(image.crop((4, 4, image.width, image.height))),
    "brightened10": lambda image, data: encode(_brightened(image)),
}


def flat(value: int, size: int = SIZE, fmt: str = "PNG") -> bytes:
  """A picture of one gray level: black at 0, blank at any other."""
  from PIL import Image
  return encode(Image.new("RGB", (size, size), (value,) * 3), fmt)


def blurred(seed: int, radius: float = 6) -> bytes:
  from PIL import ImageFilter
  return encode(picture(seed).filter(ImageFilter.GaussianBlur(radius)))

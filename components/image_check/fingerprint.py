"""One image's fingerprint, from the bytes a record holds: a perceptual hash
(near copies), a digest (exact copies), and the numbers its quality is
judged by. Computed on the image as stored, decoded at its own size, never
after the declaration's resize (trainer/image_decoding.py pads with dark
bars, which would hide a picture's size and darken it).

The hash is imagehash's pHash (`imagehash.phash`, 64 bits): the sign of the
8x8 lowest frequencies of the 32x32 gray image's DCT against their median.
Re-encoding, resizing, a small crop and a brightness change move few of its
bits; two unrelated pictures differ in about half (DEVELOPERS.md says why
this hash and not a learned embedding). A copy is confirmed on the
picture's gray thumbnail (THUMB pixels a side, the whole picture
averaged into it): its 8x8 reduction must correlate with the copy's
(duplicates.py), and the thumbnails, aligned, must show the same picture
(alignment.py)."""

import dataclasses
import hashlib
import io

import numpy as np

from dataset.records.image_bytes import image_format
from dataset.types import Image

HASH_BITS = 64


class NotAnImage(ValueError):
  """Bytes that do not decode as the declared image."""


@dataclasses.dataclass(frozen=True)
class Fingerprint:
  """Attributes:
    phash: the 64-bit perceptual hash, as an int.
    digest: SHA-1 of the stored bytes: equal for exact copies only.
    height, width, channels: the size as decoded.
    mean: mean gray level, 0 to 255 (dark, light).
    spread: standard deviation of the gray levels (blank: near-constant).
    sharpness: variance of the gray image's Laplacian (blurry).
    thumb: the gray thumbnail, THUMB x THUMB uint8 levels, rows first.
  """
  phash: int
  digest: str
  height: int
  width: int
  channels: int
  mean: float
  spread: float
  sharpness: float
  thumb: bytes


THUMB = 32  # pixels a side: the finest level at which handwriting still differs


def fingerprint(data: bytes, image: Image) -> Fingerprint:
  """The fingerprint of one stored image.

  Raises:
    NotAnImage: the bytes are neither PNG nor JPEG (encoded), of the wrong
      length (raw), or do not decode.
  """
  pixels = _pixels(data, image)
  gray = _gray(pixels)
  return Fingerprint(
      phash=_phash(gray), digest=hashlib.sha1(data).hexdigest(),
      height=pixels.shape[0], width=pixels.shape[1], channels=pixels.shape[2],
      mean=float(gray.mean()), spread=float(gray.std()), sharpness=_sharpness(gray),
      thumb=_thumb(gray))


def _pixels(data: bytes, image: Image) -> np.ndarray:
  """[height, width, channels] uint8, as stored."""
  if image.encoding == "raw":
    if len(data) != image.raw_num_bytes:
      raise NotAnImage(f"expected {image.raw_num_bytes} bytes of raw {image.raw_dtype} "
                       f"pixels, found {len(data)}")
    values = np.frombuffer(data, dtype=image.raw_dtype).reshape(image.shape)
    if values.dtype.kind == "f":  # floats in [0, 1] or [0, 255]
      top = 1.0 if float(np.nanmax(values, initial=0.0)) <= 1.0 else 255.0
      values = np.clip(np.nan_to_num(values) * (255.0 / top), 0, 255)
    elif values.dtype != np.uint8:
      values = values >> 8  # uint16
    return values.astype(np.uint8)
  from PIL import Image as PILImage
  if image_format(data) is None:
    raise NotAnImage(f"expected PNG or JPEG bytes, found {data[:8]!r}...")
  try:
    with PILImage.open(io.BytesIO(data)) as opened:
      opened.load()
      mode = ("L" if opened.mode in ("1", "L", "I", "I;16", "F")
              else "RGBA" if "A" in opened.mode or "transparency" in opened.info else "RGB")
      pixels = np.asarray(opened.convert(mode))
  except (OSError, ValueError) as e:
    raise NotAnImage(f"does not decode: {e}") from None
  return pixels[:, :, None] if pixels.ndim == 2 else pixels


def _gray(pixels: np.ndarray) -> np.ndarray:
  """Gray levels as float32, by ITU-R 601 luma (PIL's "L")."""
  if pixels.shape[2] == 1:
    return pixels[:, :, 0].astype(np.float32)
  rgb = pixels[:, :, :3].astype(np.float32)
  return rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _phash(gray: np.ndarray) -> int:
  import imagehash
  from PIL import Image as PILImage
  hashed = imagehash.phash(PILImage.fromarray(np.clip(gray, 0, 255).astype(np.uint8)))
  return int(str(hashed), 16)


def _thumb(gray: np.ndarray) -> bytes:
  """Each pixel the mean of the picture's pixels under it (PIL's BOX): a
  copy at another size gives nearly the same levels."""
  from PIL import Image as PILImage
  small = np.asarray(PILImage.fromarray(gray.astype(np.float32), mode="F").resize(
      (THUMB, THUMB), PILImage.BOX), dtype=np.float32)
  return np.clip(np.round(small), 0, 255).astype(np.uint8).tobytes()


def _sharpness(gray: np.ndarray) -> float:
  """Variance of the 4-neighbour Laplacian (OpenCV's and CleanVision's
  blur measure); 0 for an image too small to have one."""
  if min(gray.shape) < 3:
    return 0.0
  lap = (gray[:-2, 1:-1] + gray[2:, 1:-1] + gray[1:-1, :-2] + gray[1:-1, 2:]
         - 4 * gray[1:-1, 1:-1])
  return float(lap.var())


def hamming(a: int, b: int) -> int:
  return (a ^ b).bit_count()


THUMBNAIL = 64  # the report's thumbnails: pixels on the longer side


def thumbnail(data: bytes, image: Image) -> str:
  """One stored image as a data URI of at most THUMBNAIL pixels a side (the
  report's examples): a photo as a JPEG (a fifth of a PNG's bytes), a tiny
  picture as a PNG scaled up pixel by pixel.

  Raises:
    NotAnImage: as `fingerprint`.
  """
  import base64

  from PIL import Image as PILImage
  pixels = _pixels(data, image)
  picture = PILImage.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels[:, :, :3])
  scale = THUMBNAIL / max(picture.size)
  size = (max(1, round(picture.size[0] * scale)), max(1, round(picture.size[1] * scale)))
  picture = picture.resize(size, PILImage.NEAREST if scale > 1 else PILImage.BILINEAR)
  kind = "png" if scale > 1 else "jpeg"
  out = io.BytesIO()
  picture.save(out, format=kind.upper(), **({"quality": 85} if kind == "jpeg" else {}))
  return f"data:image/{kind};base64," + base64.b64encode(out.getvalue()).decode("ascii")

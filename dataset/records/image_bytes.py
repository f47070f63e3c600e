"""What an image feature's bytes may be in a record: the one fact about images
that convert, inspect, the declaration and its check all need, kept at the
bottom so that each of them can import it.

- Encoded images are PNG or JPEG, told apart by their first bytes.
- Raw pixels are one of RAW_DTYPES, stored as their bytes; the value is the
  size of one element.
"""

from typing import Optional

MAGIC = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpeg"}
RAW_DTYPES = {"uint8": 1, "uint16": 2, "float16": 2, "float32": 4, "float64": 8}


def image_format(data: bytes) -> Optional[str]:
  """`png`, `jpeg`, or None for bytes that are neither."""
  for magic, name in MAGIC.items():
    if data.startswith(magic):
      return name
  return None

"""Images for convert: a folder with one sub-folder per class, or image paths.

JPEG and PNG files keep their encoded bytes exactly: only the header is read
(for the declaration's size and channels), nothing is decoded or re-encoded
unless `--resize` or `--encode` asks for it.
"""

import collections
import io
import os
import random
from typing import List, Optional, Tuple

from PIL import Image

from dataset.convert import arrow
from dataset.convert.errors import ConvertError
from dataset.records.image_bytes import image_format

EXTENSIONS = (".jpg", ".jpeg", ".png")
_CHANNELS = {"1": 1, "L": 1, "I": 1, "I;16": 1, "F": 1, "P": 3, "RGB": 3,
             "YCbCr": 3, "CMYK": 3, "LA": 4, "PA": 4, "RGBA": 4}


def load_image(path: str, resize: Optional[Tuple[int, int]] = None,
               encode: Optional[str] = None) -> Tuple[bytes, tuple]:
  """Reads one image file.

  Args:
    path: a PNG or JPEG file.
    resize: (width, height) to resize to, or None to keep the size.
    encode: `png` or `jpeg` to re-encode to, or None to keep the bytes.

  Returns:
    (bytes to store, (format, width, height, channels)).

  Raises:
    ConvertError: naming the path: unreadable, not an image, or undecodable.
  """
  try:
    with open(path, "rb") as f:
      data = f.read()
  except OSError as e:
    raise ConvertError(f"{path}: cannot read: {e.strerror}") from None
  fmt = image_format(data)
  if fmt is None:
    raise ConvertError(f"{path}: not a PNG or JPEG image (starts with {data[:8]!r})")
  try:
    image = Image.open(io.BytesIO(data))  # reads the header only
    if resize or (encode and encode != fmt):
      image = image.convert("RGB" if _CHANNELS.get(image.mode, 3) >= 3 else "L")
      if resize:
        image = image.resize(resize, Image.BILINEAR)
      fmt = encode or fmt
      buf = io.BytesIO()
      image.save(buf, format="PNG" if fmt == "png" else "JPEG", quality=95)
      data = buf.getvalue()
  except (OSError, ValueError, Image.DecompressionBombError) as e:
    raise ConvertError(f"{path}: not a readable {fmt.upper()} image: {e}") from None
  return data, (fmt, image.size[0], image.size[1], _CHANNELS.get(image.mode, 3))


def image_declaration(shapes: collections.Counter, name: str, source: str) -> dict:
  """The declared image feature, from the (format, w, h, channels) counts.

  A mix of PNG and JPEG is declared `encoding: auto`: the bytes are kept as
  they are, and the model decodes either kind alike.
  """
  formats = {s[0] for s in shapes}
  fmt, width, height, channels = shapes.most_common(1)[0][0]
  return {"kind": "image", "encoding": "auto" if len(formats) > 1 else fmt,
          "height": height, "width": width, "channels": channels}


class ImageFolder:
  """A folder with one sub-folder of images per class; classes sorted by name,
  images in a shuffled order (the same each time).

  Keys (for the train/eval split) are the paths relative to the folder.
  """

  def __init__(self, root: str, resize=None, encode=None, image_name="image",
               label_name="label"):
    if not os.path.isdir(root):
      raise ConvertError(f"{root}: expected a folder with one sub-folder per class")
    self.root, self.resize, self.encode = root, resize, encode
    self.image_name, self.label_name = image_name, label_name
    self.classes = sorted(d for d in os.listdir(root)
                          if os.path.isdir(os.path.join(root, d)))
    if len(self.classes) < 2:
      raise ConvertError(f"{root}: expected one sub-folder per class (at least "
                         f"2), found {len(self.classes)}")
    self.items: List[Tuple[str, int]] = []
    for label, name in enumerate(self.classes):
      for folder, _, files in sorted(os.walk(os.path.join(root, name))):
        for f in sorted(files):
          self.items.append((os.path.relpath(os.path.join(folder, f), root), label))
    # Written in folder order, every shard would hold one class after
    # another, and a Trainer's shuffle buffer (2,048 examples) would see a
    # class or two at a time: a CNN on 8 classes of photos reached 0.23 where
    # the same model on shuffled shards reached 0.89. A fixed seed: the same
    # folder converts to the same shards.
    random.Random(0).shuffle(self.items)
    self.num_items = len(self.items)

  def record_batch(self, lo: int, hi: int, skip_bad: bool, summary: collections.Counter):
    images, labels, keys, bad = [], [], [], []
    for rel, label in self.items[lo:hi]:
      path = os.path.join(self.root, rel)
      try:
        if not rel.lower().endswith(EXTENSIONS):
          raise ConvertError(f"{path}: not an image file (expected {', '.join(EXTENSIONS)})")
        data, shape = load_image(path, self.resize, self.encode)
      except ConvertError as e:
        if not skip_bad:
          raise
        bad.append((path, str(e)))
        continue
      summary[shape] += 1
      images.append(data)
      labels.append(label)
      keys.append(rel)
    batch = arrow.record_batch({self.image_name: arrow.bytes_column(images),
                                self.label_name: arrow.list_column(
                                    arrow.pa.array(labels, arrow.pa.int64()))})
    return batch, keys, bad

  def declaration(self, summary: collections.Counter) -> dict:
    """The features and label this source writes."""
    return {"label": {"name": self.label_name, "num_classes": len(self.classes)},
            "classes": self.classes,
            "features": {self.image_name: image_declaration(summary, self.image_name,
                                                            self.root)}}

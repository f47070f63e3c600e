"""NumPy arrays for convert: `.npz` files, or an `.npy` of images plus labels.

Images are stored as raw bytes (`array.tobytes()` of each item), and the
declaration records their height, width, channels and dtype, so that the
pipeline can rebuild them exactly. Other arrays with one row per item become
numeric features.
"""

import collections
import os
from typing import List, Optional

import numpy as np

from dataset.convert import arrow
from dataset.convert.errors import ConvertError
from dataset.records.image_bytes import RAW_DTYPES

IMAGE_KEYS = ("images", "image", "x", "X")
LABEL_KEYS = ("labels", "label", "y", "Y")


def _load(path: str) -> dict:
  if not os.path.isfile(path):
    raise ConvertError(f"{path}: no such file")
  try:
    loaded = np.load(path, allow_pickle=False)
  except ValueError as e:
    # Object arrays (one array per item, of mixed shapes) need pickle, which
    # runs code from the file: refuse them and say what to do instead.
    raise ConvertError(f"{path}: arrays of mixed shapes or objects ({e}); "
                       "store images of one shape in one array") from None
  except OSError as e:
    raise ConvertError(f"{path}: not a NumPy file: {e}") from None
  return dict(loaded.items()) if isinstance(loaded, np.lib.npyio.NpzFile) else {"": loaded}


def _pick(path: str, arrays: dict, wanted: Optional[str], defaults, role: str) -> str:
  if wanted:
    if wanted not in arrays:
      raise ConvertError(f"{path}: no array '{wanted}' for the {role}; it holds "
                         f"{', '.join(arrays) or 'nothing'}")
    return wanted
  for key in defaults:
    if key in arrays:
      return key
  raise ConvertError(f"{path}: no {role} array (looked for {', '.join(defaults)}); "
                     f"it holds {', '.join(arrays)}: name one with --{role}s-key")


class Arrays:
  """Items from one or more `.npz` files (or one `.npy` with `labels_path`).

  Every file must hold images of the same shape and dtype. Keys (for the
  train/eval split) are `<file name>:<index>`.
  """

  def __init__(self, paths: List[str], images_key: Optional[str] = None,
               label_key: Optional[str] = None, labels_path: Optional[str] = None,
               image_name: str = "image", label_name: str = "label"):
    self.image_name, self.label_name = image_name, label_name
    images, labels, extras, self.keys = [], [], collections.defaultdict(list), []
    first = None
    for path in paths:
      arrays = _load(path)
      if "" in arrays:
        if not labels_path:
          raise ConvertError(f"{path}: an .npy holds only images: pass --labels FILE.npy")
        arrays = {"images": arrays[""], "labels": _load(labels_path)[""]}
      x = arrays[_pick(path, arrays, images_key, IMAGE_KEYS, "image")]
      y = arrays[_pick(path, arrays, label_key, LABEL_KEYS, "label")]
      self._check(path, x, y, first)
      first = first or (path, x)
      images.append(x)
      labels.append(y.astype(np.int64))
      for name, a in arrays.items():
        if a is not x and a is not y and a.ndim in (1, 2) and len(a) == len(x):
          extras[name].append(a.reshape(len(a), -1))
      self.keys += [f"{os.path.basename(path)}:{i}" for i in range(len(x))]
    self.images = np.concatenate(images)
    self.labels = np.concatenate(labels)
    self.extras = {n: np.concatenate(a) for n, a in extras.items() if len(a) == len(paths)}
    self.num_items = len(self.images)

  @staticmethod
  def _check(path, x, y, first) -> None:
    if x.ndim not in (3, 4) or (x.ndim == 4 and x.shape[3] not in (1, 3, 4)):
      raise ConvertError(f"{path}: images: expected shape (N, height, width) or "
                         f"(N, height, width, 1|3|4), found {x.shape}")
    if x.dtype.name not in RAW_DTYPES:
      raise ConvertError(f"{path}: images: expected dtype {', '.join(RAW_DTYPES)}, "
                         f"found {x.dtype.name}")
    if first and (x.shape[1:], x.dtype) != (first[1].shape[1:], first[1].dtype):
      raise ConvertError(
          f"{path}: arrays of mixed shapes: images are {x.shape[1:]} {x.dtype}, but "
          f"{first[0]} has {first[1].shape[1:]} {first[1].dtype}")
    if y.ndim != 1 or len(y) != len(x) or not np.issubdtype(y.dtype, np.integer):
      raise ConvertError(f"{path}: labels: expected {len(x)} integer class ids, "
                         f"found shape {y.shape} {y.dtype}")
    if len(y) and y.min() < 0:
      raise ConvertError(f"{path}: labels: expected class ids >= 0, found {y.min()}")

  def record_batch(self, lo: int, hi: int, skip_bad: bool, summary: collections.Counter):
    columns = {self.image_name: arrow.bytes_column([a.tobytes() for a in self.images[lo:hi]]),
               self.label_name: arrow.list_column(self.labels[lo:hi])}
    for name, values in self.extras.items():
      columns[name] = arrow.rows_column(values[lo:hi])
    return arrow.record_batch(columns), self.keys[lo:hi], []

  def declaration(self, summary: collections.Counter) -> dict:
    shape = self.images.shape
    image = {"kind": "image", "encoding": "raw", "height": shape[1], "width": shape[2],
             "channels": shape[3] if len(shape) == 4 else 1,
             "raw_dtype": self.images.dtype.name}
    features = {self.image_name: image}
    for name, values in self.extras.items():
      dtype = "float" if np.issubdtype(values.dtype, np.floating) else "int"
      features[name] = {"kind": "numeric", "dtype": dtype, "length": values.shape[1]}
    num_classes = max(2, int(self.labels.max()) + 1 if len(self.labels) else 2)
    return {"label": {"name": self.label_name, "num_classes": num_classes},
            "classes": None, "features": features}

"""The step's result: what the image check found, as the run's lines, the
report and the Kubeflow run page read it (store/report/image_check.py).

    {"images": {split: count}, "files": n, "reused": n,
     "checks": "image check" | "row check" (data without an image: rows.py),
     "classes": {split: {label: count}},
     "findings": [{"kind", "decision", "count", "line", "note",
                   "examples": [[image, ...] (a group, or one image)
                                | {"split", "label", "count"} (a class)]}]}

An example image is {"split", "file", "index", "label", "size", "thumb"
(a data URI) or "error"}, a row's without the last three; a group shows its first MEMBERS, and says how
many it has. The thumbnails are read here, from the few records they need.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from components.image_check import findings as kinds
from components.image_check.findings import Finding, Item
from components.image_check.fingerprint import NotAnImage, thumbnail
from dataset.types import Declaration

MEMBERS = 4  # images shown of one group of copies
# Kinds whose examples are classes ([split, label, count]), not records.
CLASS_KINDS = ("minority_class", "small_eval_class")


class ImagesRefused(RuntimeError):
  """The image check found a kind the declaration says stops the run."""


def refusal(result: dict) -> str:
  """Why the run stops, in one line; "" when nothing found stops it."""
  stops = [f for f in result.get("findings", []) if f["decision"] == "stop"]
  if not stops:
    return ""
  return (f"the {result.get('checks', 'image check')} stops the run before Transform: "
          + "; ".join(
      f"{f['kind']}: {f['count']} {f['describes']}" for f in stops)
      + " (the declaration's image_checks: sets each kind to stop, warn or ignore)")


def as_dict(found: Sequence[Finding], items: Sequence[Item], decl: Declaration,
            manifest: Sequence[dict] = ()) -> dict:
  """The result of the findings over `items`; `manifest`, the fingerprint
  files (how many were reused)."""
  images: Dict[str, int] = {}
  for item in items:
    images[item.split] = images.get(item.split, 0) + 1
  pictures = bool(decl.of_kind("image"))  # else rows (rows.py): nothing to show but where
  shown = [_shown(example) for f in found for example in f.examples
           if f.kind not in CLASS_KINDS]
  thumbs = _thumbnails([m for example in shown for m in example], decl) if pictures else {}
  return {
      "images": images, "files": len(manifest),
      "checks": "image check" if pictures else "row check",
      "reused": sum(1 for entry in manifest if entry.get("reused")),
      # A regression label's values are no classes: counting each value
      # would fill the page with one bar per distinct tip.
      "classes": kinds.class_counts(items) if decl.label.kind == "classes" else {},
      "findings": [{"kind": f.kind, "decision": f.decision, "count": f.count,
                    "line": f.line(), "describes": f.what or kinds.KINDS[f.kind],
                    "note": f.note,
                    "examples": [_example(f.kind, e, thumbs, pictures) for e in f.examples]}
                   for f in found]}


def _example(kind: str, example: list, thumbs: Dict[Tuple[str, int], str],
             pictures: bool = True):
  if kind in CLASS_KINDS:
    split, label, count = example
    return {"split": split, "label": label, "count": count}
  out = []
  for item in _shown(example):
    image = {"split": item.split, "file": item.file, "index": item.index,
             "label": item.label, "more": 0}
    if not pictures:  # a row: where it is is what there is to show
      out.append(image)
      continue
    if item.print is not None:
      image["size"] = f"{item.print.width}x{item.print.height}"
    thumb = thumbs.get((item.file, item.index))
    if thumb:
      image["thumb"] = thumb
    else:
      image["error"] = item.error or "not read"
    out.append(image)
  if len(example) > MEMBERS:
    out[-1]["more"] = len(example) - MEMBERS
  return out


def _shown(group: Sequence[Item]) -> List[Item]:
  """The first MEMBERS of a group, its splits taken in turn: a leak shows
  the train picture beside the eval copies however many there are."""
  by_split: Dict[str, List[Item]] = {}
  for item in group:
    by_split.setdefault(item.split, []).append(item)
  turns = [item for rank in range(MEMBERS) for items in by_split.values()
           if rank < len(items) for item in [items[rank]]]
  return turns[:MEMBERS]


def _thumbnails(wanted: Sequence[Item], decl: Declaration) -> Dict[Tuple[str, int], str]:
  """(file, record index) -> a PNG thumbnail, for each decodable image of
  `wanted`: each file read once, up to its last record wanted."""
  import tensorflow as tf

  from components.image_check.check import image_feature
  from dataset.records import format as tfrecord
  feature = image_feature(decl)
  by_file: Dict[str, set] = {}
  for item in wanted:
    if item.print is not None:
      by_file.setdefault(item.file, set()).add(item.index)
  out = {}
  for path, indexes in by_file.items():
    last = max(indexes)
    for index, record in enumerate(tfrecord.read_records(path, limit=last + 1,
                                                        opener=tf.io.gfile.GFile)):
      if index in indexes:
        data = _image_bytes(record, feature.name)
        try:
          out[(path, index)] = thumbnail(data, feature.image) if data else None
        except NotAnImage:
          pass
  return out


def _image_bytes(record: bytes, name: str) -> Optional[bytes]:
  import tensorflow as tf
  values = tf.train.Example.FromString(record).features.feature[name].bytes_list.value
  return values[0] if values else None


def lines(result: dict) -> List[str]:
  """The run's lines: one per kind found, none when nothing is (the
  report, and `describe`, say how many images were checked)."""
  return [f["line"] for f in result["findings"]]


def describe(result: dict) -> str:
  """How many images were checked, per split, and what was reused."""
  images = result["images"]
  reused = (f"; the fingerprints of {result['reused']} of {result['files']} files "
            "reused from earlier runs" if result.get("reused") else "")
  what = "rows" if result.get("checks") == "row check" else "images"
  return (f"{sum(images.values())} {what} checked ("
          + ", ".join(f"{split}: {n}" for split, n in sorted(images.items())) + f"){reused}")

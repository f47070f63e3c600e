"""Fingerprints written to files and read back: how the step's Beam workers
hand their fingerprints to the judgement (on Dataflow, Flink or Spark they
share no memory with the step's process, only its storage), and what a
later run reads back instead of decoding an older span's images again.

One gzipped JSON line per image (findings.Item), a file per TFRecord file,
written whole under a temporary name and then renamed: a reader never
finds half a file, and a worker that died left none."""

import gzip
import json
from typing import List

from components.image_check.findings import Item
from components.image_check.fingerprint import Fingerprint


def _line(item: Item) -> dict:
  line = {"split": item.split, "file": item.file, "index": item.index, "label": item.label}
  if item.print is None:
    return {**line, "error": item.error}
  p = item.print
  return {**line, "phash": f"{p.phash:016x}", "digest": p.digest, "height": p.height,
          "width": p.width, "channels": p.channels, "mean": p.mean, "spread": p.spread,
          "sharpness": p.sharpness, "thumb": p.thumb.hex()}


def _item(line: dict) -> Item:
  if "error" in line:
    return Item(line["split"], line["file"], line["index"], line["label"], None, line["error"])
  p = Fingerprint(phash=int(line["phash"], 16), digest=line["digest"], height=line["height"],
                  width=line["width"], channels=line["channels"], mean=line["mean"],
                  spread=line["spread"], sharpness=line["sharpness"],
                  thumb=bytes.fromhex(line["thumb"]))
  return Item(line["split"], line["file"], line["index"], line["label"], p)


def write(path: str, items: List[Item]) -> None:
  """`items` into `path` (any URI TensorFlow opens), whole or not at all.
  Two writers of one path (byte-identical files of a span; two runs over a
  new span) write the same bytes, each under a name of its own first."""
  import uuid

  import tensorflow as tf
  text = "".join(json.dumps(_line(item), sort_keys=True) + "\n" for item in items)
  tf.io.gfile.makedirs(path.rsplit("/", 1)[0])
  temporary = f"{path}.tmp-{uuid.uuid4().hex}"
  with tf.io.gfile.GFile(temporary, "wb") as f:
    f.write(gzip.compress(text.encode("utf-8"), compresslevel=3))
  try:
    tf.io.gfile.rename(temporary, path, overwrite=True)
  except tf.errors.OpError:
    if not tf.io.gfile.exists(path):  # not the other writer's: a real failure
      raise
    tf.io.gfile.remove(temporary)


def read(path: str) -> List[Item]:
  """What `write` wrote."""
  import tensorflow as tf
  with tf.io.gfile.GFile(path, "rb") as f:
    text = gzip.decompress(f.read()).decode("utf-8")
  return [_item(json.loads(line)) for line in text.splitlines() if line]

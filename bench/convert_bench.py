"""Benchmark: `tfrecords convert` against the hand-written single-writer loop.

    .venv/bin/python -m bench.convert_bench [--rows 100000] [--images 10000]

Both sides convert the same inputs, in one run, to GZIP TFRecords, and the
figures printed are wall-clock examples/s and MB/s (MB of TFRecords written).
For the table, `tfrecords convert table` is also timed as a user meets it:
a process of its own, start-up and imports included; the goal is judged on
that figure, against the loop inside this already-started process (the
loop's best case).

The loop is the one users write by hand, as in TensorFlow's TFRecord
tutorial: `_float_feature` / `_bytes_feature` / `_int64_feature` helpers, one
`tf.train.Example` built per row in Python, one `TFRecordWriter`, one file.
For images the tutorial decodes each JPEG to record its height and width; a
second variant that only reads the bytes is printed too, so the comparison
does not rest on that decode.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from dataset.convert.images import ImageFolder
from dataset.convert.tables import Table
from dataset.convert.writer import Output, convert
from runtime import startup

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_table(path: str, rows: int) -> None:
  import pandas as pd
  rng = np.random.default_rng(0)
  df = pd.DataFrame({f"f{i:02d}": rng.normal(size=rows).astype(np.float32)
                     for i in range(25)})
  df["label"] = rng.integers(0, 10, rows)
  df.to_csv(path, index=False)


def make_jpegs(root: str, count: int, size=(96, 96)) -> None:
  from PIL import Image
  rng = np.random.default_rng(0)
  base = rng.integers(0, 255, (size[1] // 8, size[0] // 8, 3), dtype=np.uint8)
  for i in range(count):
    folder = os.path.join(root, f"class{i % 10}")
    os.makedirs(folder, exist_ok=True)
    # Smooth, photo-like content (JPEG sizes like real photos), varied per file.
    small = np.roll(base, i, axis=1) ^ np.uint8(i % 251)
    Image.fromarray(small).resize(size, Image.BILINEAR).save(
        os.path.join(folder, f"{i:06d}.jpg"), quality=90)


def _float_feature(tf, value):
  return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))


def _int64_feature(tf, value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes_feature(tf, value):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def loop_table(csv_path: str, out: str) -> int:
  import pandas as pd
  import tensorflow as tf
  df = pd.read_csv(csv_path)
  columns = [c for c in df.columns if c != "label"]
  n = 0
  with tf.io.TFRecordWriter(out, options="GZIP") as writer:
    for row in df.itertuples(index=False):
      values = row._asdict()
      feature = {c: _float_feature(tf, values[c]) for c in columns}
      feature["label"] = _int64_feature(tf, values["label"])
      example = tf.train.Example(features=tf.train.Features(feature=feature))
      writer.write(example.SerializeToString())
      n += 1
  return n


def loop_images(root: str, out: str, decode: bool) -> int:
  import tensorflow as tf
  classes = sorted(os.listdir(root))
  n = 0
  with tf.io.TFRecordWriter(out, options="GZIP") as writer:
    for label, name in enumerate(classes):
      for f in sorted(os.listdir(os.path.join(root, name))):
        image_string = open(os.path.join(root, name, f), "rb").read()
        feature = {"label": _int64_feature(tf, label),
                   "image_raw": _bytes_feature(tf, image_string)}
        if decode:
          shape = tf.io.decode_jpeg(image_string).shape
          feature["height"] = _int64_feature(tf, shape[0])
          feature["width"] = _int64_feature(tf, shape[1])
          feature["depth"] = _int64_feature(tf, shape[2])
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        writer.write(example.SerializeToString())
        n += 1
  return n


def _size(path: str) -> int:
  if os.path.isfile(path):
    return os.path.getsize(path)
  return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def timed(name: str, fn, out: str) -> dict:
  start = time.perf_counter()
  n = fn()
  seconds = time.perf_counter() - start
  mb = _size(out) / 1e6
  return {"name": name, "examples": n, "seconds": seconds, "mb": mb,
          "ex_s": n / seconds, "mb_s": mb / seconds}


def whole_process(argv: list, rows: int) -> int:
  """Runs a command as a user does, in a fresh process; its row count."""
  subprocess.run([sys.executable, *argv], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
  return rows


def report(title: str, rows: list, baseline: str, goal: float) -> None:
  print(f"\n{title}")
  print(f"  {'':34} {'examples':>9} {'seconds':>8} {'examples/s':>11} {'MB out':>7} "
        f"{'MB/s':>7} {'speed-up':>8}")
  base = next(r for r in rows if r["name"] == baseline)
  for r in rows:
    print(f"  {r['name']:34} {r['examples']:>9} {r['seconds']:>8.2f} {r['ex_s']:>11,.0f} "
          f"{r['mb']:>7.1f} {r['mb_s']:>7.1f} {r['ex_s'] / base['ex_s']:>7.1f}x")
  convert_row = rows[-1]
  ratio = convert_row["ex_s"] / base["ex_s"]
  print(f"  goal: >= {goal:g}x the loop; measured {ratio:.1f}x: "
        f"{'met' if ratio >= goal else 'NOT met'}")


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.convert_bench",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--rows", type=int, default=100_000)
  parser.add_argument("--images", type=int, default=10_000)
  parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
  return parser


def main() -> None:
  args = build_parser().parse_args()
  work = tempfile.mkdtemp(prefix="convert-bench-")
  try:
    print(f"inputs in {work}; {args.workers} worker(s) for convert; {os.cpu_count()} cores")
    csv_path = os.path.join(work, "table.csv")
    make_table(csv_path, args.rows)
    rows = [
        timed("hand-written loop", lambda: loop_table(csv_path, f"{work}/t.tfrecord.gz"),
              f"{work}/t.tfrecord.gz"),
        timed("convert, inside this process", lambda: convert(
            Table(csv_path, "label"), Output(f"{work}/t_out", workers=args.workers),
            progress=False).total, f"{work}/t_out"),
        timed("tfrecords convert table (process)", lambda: whole_process(
            ["-m", "commands.tfrecords", "convert", "table", csv_path, "--label", "label", "--output",
             f"{work}/t_cli", "--workers", str(args.workers)], args.rows), f"{work}/t_cli")]
    report(f"table: {args.rows} rows x 25 float columns + label (CSV, {_size(csv_path) / 1e6:.0f} MB)",
           rows, "hand-written loop", 10)

    images = os.path.join(work, "images")
    make_jpegs(images, args.images)
    rows = [
        timed("hand-written loop (tutorial)", lambda: loop_images(
            images, f"{work}/i.tfrecord.gz", decode=True), f"{work}/i.tfrecord.gz"),
        timed("hand-written loop, no decode", lambda: loop_images(
            images, f"{work}/j.tfrecord.gz", decode=False), f"{work}/j.tfrecord.gz"),
        timed("tfrecords convert images", lambda: convert(
            ImageFolder(images), Output(f"{work}/i_out", workers=args.workers),
            progress=False).total, f"{work}/i_out")]
    report(f"images: {args.images} JPEG files ({_size(images) / 1e6:.0f} MB), 10 classes",
           rows, "hand-written loop (tutorial)", 2)
    no_decode = rows[-1]["ex_s"] / rows[1]["ex_s"]
    print(f"  against the loop without decode: {no_decode:.1f}x")
  finally:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  startup.start(quiet=True)  # TensorFlow quiet about CUDA, as every command
  main()

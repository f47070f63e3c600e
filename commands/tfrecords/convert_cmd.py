"""`tfrecords convert`: image folders, tables or arrays -> sharded TFRecords.

    tfrecords convert images DIR   --output OUT [--resize 64x64] [--encode png]
    tfrecords convert table FILE   --output OUT --label COL [--image-column COL] [--key COL]
    tfrecords convert arrays FILE... --output OUT [--images-key K] [--label-key K] [--labels Y.npy]

Common options: --compression GZIP|NONE, --shard-mb, --eval-percent,
--span N, --workers, --skip-bad, --name, --prefix. Writes the shards and a
`dataset.yaml` declaring them; never writes into a non-empty folder.
"""

import argparse
import os
import sys

from dataset import converted, names
from dataset.convert.errors import ConvertError
from dataset.convert.writer import Output, convert
from dataset.declaration import DeclarationError


def _size(text: str):
  try:
    width, height = (int(v) for v in text.lower().split("x"))
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, e.g. 64x64, found {text!r}") from None
  return width, height


def _common(p) -> None:
  p.add_argument("--output", required=True,
                 help="output folder (the dataset root); must be empty or missing")
  p.add_argument("--name", help="dataset name in the declaration; default: the "
                                "output folder's name")
  p.add_argument("--prefix", default="data", help="shard file name prefix")
  p.add_argument("--compression", choices=("GZIP", "NONE"), default="GZIP")
  p.add_argument("--shard-mb", type=float, default=100.0,
                 help="target shard size in MB of records before compression "
                      "(default 100)")
  p.add_argument("--eval-percent", type=int, default=0,
                 help="put this percent in eval/ and the rest in train/, by a "
                      "stable hash of each item's key; 0 (default) writes one folder")
  p.add_argument("--span", type=int, help="write into <output>/span-<N>/, for "
                                          "retraining as new data arrives")
  p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                 help="processes (default: every core)")
  p.add_argument("--skip-bad", action="store_true",
                 help="skip unreadable items and list them at the end, instead of stopping")


def _image_options(p) -> None:
  p.add_argument("--resize", type=_size, help="resize images to WIDTHxHEIGHT")
  p.add_argument("--encode", choices=("png", "jpeg"), help="re-encode images")


def add_parser(commands) -> None:
  p = commands.add_parser("convert", help="convert images, tables or arrays to TFRecords",
                          description=__doc__,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
  kinds = p.add_subparsers(dest="source", required=True)
  images = kinds.add_parser("images", help="a folder with one sub-folder per class")
  images.add_argument("folder")
  _image_options(images)
  table = kinds.add_parser("table", help="a CSV or Parquet table, one record per row")
  table.add_argument("file")
  table.add_argument("--label", required=True, help="the label column")
  table.add_argument("--image-column", help="a column of image paths, relative to the table")
  table.add_argument("--key", help="column whose value decides the split (default: row number)")
  table.add_argument("--strict", action="store_true",
                     help="an empty cell is an error (with --skip-bad: its row is "
                          "dropped); by default a column with empty cells is "
                          "declared `required: false` and its gaps stay missing")
  _image_options(table)
  arrays = kinds.add_parser("arrays", help=".npz files, or an .npy of images with --labels")
  arrays.add_argument("files", nargs="+")
  arrays.add_argument("--images-key", help="the images array in each .npz")
  arrays.add_argument("--label-key", help="the labels array in each .npz")
  arrays.add_argument("--labels", help="an .npy of labels, for an .npy of images")
  for sub in (images, table, arrays):
    _common(sub)
    sub.set_defaults(run=run)


def _source(args):
  # Each source's libraries (Pillow; pandas and Arrow's CSV and Parquet
  # readers; NumPy's loaders) load only when it is the one converting.
  if args.source == "images":
    from dataset.convert.images import ImageFolder
    return ImageFolder(args.folder, args.resize, args.encode), args.folder
  if args.source == "table":
    from dataset.convert.tables import Table
    return Table(args.file, args.label, args.image_column, args.key, args.resize,
                 args.encode, args.skip_bad, args.strict), args.file
  from dataset.convert.arrays import Arrays
  return Arrays(args.files, args.images_key, args.label_key, args.labels), \
      ", ".join(args.files)


def run(args) -> int:
  root = os.path.abspath(args.output)
  out_dir = root if args.span is None else os.path.join(root, f"span-{args.span}")
  name = args.name or os.path.basename(root).replace(".", "_") or "dataset"
  output = Output(out_dir=out_dir, prefix=args.prefix, compression=args.compression,
                  shard_mb=args.shard_mb, eval_percent=args.eval_percent,
                  workers=max(1, args.workers), skip_bad=args.skip_bad)
  yaml_path = os.path.join(root, "dataset.yaml")
  try:
    if not 0 <= args.eval_percent < 100:
      raise ConvertError(f"--eval-percent: expected 0 to 99, found {args.eval_percent}")
    source, what = _source(args)

    def declaration_fn(result):
      text = converted.declaration_text(name, source.declaration(result.summary),
                                      output, args.span, what)
      converted.check_declaration(text, yaml_path)
      return text

    result = convert(source, output,
                     declaration_fn if args.span is None else None)
    if args.span is not None:
      converted.write_atomically(declaration_fn(result), yaml_path)
  except (ConvertError, DeclarationError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  skipped = getattr(source, "read_skipped", []) + result.skipped
  print(converted.result_line(result))
  for split, count in result.counts.items():
    # A regression label's values are no classes: hundreds of tips, each once.
    classes = "" if getattr(source, "regression", False) else _per_class(
        result, split, getattr(source, "classes", None))
    print(f"  {split or 'all'}: {count} examples in {len(result.files[split])} shard(s)"
          + classes)
  if skipped:
    print(f"skipped {len(skipped)} bad item(s):")
    for item, reason in skipped:
      print(f"  {item}: {reason}")
  for column in getattr(source, "empty_columns", []):
    print(f"left out column '{column}': it has no value in any row")
  renamed = names.renamed_line(getattr(source, "names", {}))
  if renamed:
    print(renamed)
  print(f"declaration: {yaml_path}")
  return 0


def _per_class(result, split: str, names) -> str:
  """"; per class: cat 40, dog 38" for a split (a class id named when the
  source names its classes), "" without a label."""
  counts = sorted((label, n) for (s, label), n in result.classes.items() if s == split)
  if not counts:
    return ""
  named = [(names[label] if names and isinstance(label, int) and 0 <= label < len(names)
            else label.decode("utf-8", "replace") if isinstance(label, bytes) else label, n)
           for label, n in counts]
  return "; per class: " + ", ".join(f"{label} {n}" for label, n in named)

"""`tfrecords inspect`: record counts, the inferred feature spec, a few examples."""

import glob
import os
import sys

from dataset.records import format as tfrecord
from dataset.records.inspect import describe_value, inspect_files


def add_parser(commands) -> None:
  p = commands.add_parser("inspect", help="count records, infer the feature spec, show examples",
                          description=__doc__)
  p.add_argument("paths", nargs="+", help="TFRecord files, globs or folders (plain or GZIP)")
  p.add_argument("--examples", type=int, default=3, help="examples to print (default 3)")
  p.add_argument("--limit", type=int, help="read at most this many records per file")
  p.set_defaults(run=run)


def expand(patterns) -> list:
  """Files matching the patterns, in order; a folder stands for the TFRecord
  files under it (`*.tfrecord*`, as `convert` names them, at any depth). A
  pattern matching nothing is an error."""
  files = []
  for pattern in patterns:
    if os.path.isdir(pattern):
      matched = sorted(glob.glob(os.path.join(pattern, "**", "*.tfrecord*"), recursive=True))
      if not matched:
        raise FileNotFoundError(f"{pattern}: a folder with no TFRecord files "
                                f"(*.tfrecord*) under it")
    else:
      matched = sorted(glob.glob(pattern))
    if not matched:
      raise FileNotFoundError(f"{pattern}: no such file")
    files += matched
  return files


def run(args) -> int:
  try:
    report = inspect_files(expand(args.paths), args.examples, args.limit)
  except (FileNotFoundError, tfrecord.BadRecord) as e:
    print(f"error: {e} (run `tfrecords verify` for every bad record)", file=sys.stderr)
    return 2
  print("records per file:")
  for path, count in report["counts"].items():
    print(f"  {count:>10}  {path}")
  print(f"  {report['total']:>10}  in all")
  print("features:")
  for name, stats in sorted(report["spec"].items()):
    print(f"  {name}: {stats.spec(report['total'])}")
  for i, example in enumerate(report["examples"]):
    print(f"example {i}:")
    for name, values in sorted(example.items()):
      print(f"  {name}: {describe_value(values)}")
  return 0

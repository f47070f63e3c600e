"""Deletes the artifacts that only a local pipeline's older runs used.

`python -m commands.retention --keep N [--delete]` (store/retention/__init__.py says what stays).

Dry-runs by default: lists what it would delete, with the bytes, and
deletes nothing. Exit status 2, with one line, when the store is missing or
foreign, the serving dir cannot be reached, or (with --delete) a run of
the pipeline is in progress in the folder.
"""

import argparse
import os
import sys
from typing import List, Optional

from commands.run import flags
from runtime import storage
from store.retention import apply

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m commands.retention",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--keep", type=flags.keep_count, required=True, metavar="N",
                      help="keep the artifacts of the newest N runs")
  parser.add_argument("--delete", action="store_true",
                      help="delete (default: list what would be deleted, and the bytes)")
  flags.add_home_flags(parser, os.path.join(HERE, "runs"))
  parser.add_argument("--pipeline-root", metavar="URI",
                      help="local_runner.py's --pipeline-root (default: "
                           "<output-dir>/<pipeline>/pipeline_root)")
  parser.add_argument("--serving-dir", metavar="URI",
                      help="local_runner.py's --serving-dir (default: "
                           "<output-dir>/<pipeline>/serving)")
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  from serving import ServingError
  from store import run_lock
  from store.metadata.store import StoreError
  home = os.path.join(args.output_dir, args.pipeline)
  metadata_path = args.metadata or os.path.join(home, "metadata.sqlite")
  try:
    if args.delete and os.path.isfile(metadata_path):
      # Never while a run of the pipeline resolves its inputs or writes.
      run_lock.hold(home, args.pipeline, "python -m commands.retention --delete")
    _, lines = apply.apply(metadata_path, args.pipeline, args.keep,
                  args.pipeline_root or os.path.join(home, "pipeline_root"),
                  args.serving_dir or os.path.join(home, "serving"), args.delete)
  except (StoreError, ServingError, storage.StorageError, run_lock.RunInProgress) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 0

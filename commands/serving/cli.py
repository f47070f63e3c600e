"""`python -m commands.serving versions|rollback`: a serving dir's versions, and
putting an earlier one back.

Both work on any serving dir, a local run's or a Kubeflow pipeline's
(`--serving-dir`, a folder, gs:// or s3://), from what each version records
beside its model (serving/history.py); neither needs ML Metadata. Exit
status 2, with one line, when the serving dir cannot be reached or the
version asked for is not there. `rollback` writes a new version and deletes
nothing.
"""

import argparse
import os
import sys
from typing import List, Optional

from runtime import storage
from serving import ServingError, history

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m commands.serving",
                                   description=__doc__.split("\n")[0].strip("`"))
  common = argparse.ArgumentParser(add_help=False)
  common.add_argument("--serving-dir", help="the serving dir (default: <output-dir>/"
                      "<pipeline>/serving, where local_runner.py pushes)")
  common.add_argument("--pipeline", default="digits",
                      help="the pipeline's name (default: %(default)s)")
  common.add_argument("--output-dir", default=os.path.join(HERE, "runs"),
                      help="local_runner.py's --output-dir (default: runs/)")
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser("versions", parents=[common],
                      help="each version, newest (served) first: when pushed, trained "
                           "on what, the judgement that blessed it")
  rollback = commands.add_parser("rollback", parents=[common],
                                 help="push a copy of an earlier version as the newest")
  rollback.add_argument("--to", metavar="VERSION",
                        help="the version to bring back (default: the one before the newest)")
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  serving_dir = args.serving_dir or os.path.join(args.output_dir, args.pipeline, "serving")
  try:
    if args.command == "rollback":
      lines = history.rollback_lines(serving_dir, args.to)
    else:
      lines = history.version_lines(serving_dir)
  except (ServingError, storage.StorageError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 0

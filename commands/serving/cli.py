"""`python -m commands.serving versions|rollback|request`: a serving dir's
versions, putting an earlier one back, and a JSON client's request.

Both work on any serving dir, a local run's or a Kubeflow pipeline's
(`--serving-dir`, a folder, gs:// or s3://), from what each version records
beside its model (serving/history.py); neither needs ML Metadata. Exit
status 2, with one line, when the serving dir cannot be reached or the
version asked for is not there. `rollback` writes a new version and deletes
nothing. `request` prints the REST predict request (`{"instances": [...]}`)
that `serving_default` takes for the first records of a TFRecord file, as a
JSON client sends them (serving/rest.py), for `curl -d @request.json`.
"""

import argparse
import os
import sys
from typing import List, Optional

from dataset.fields import DeclarationError
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
  request = commands.add_parser("request", help="print a REST predict request for the "
                                "first records of a TFRecord file")
  request.add_argument("--dataset", required=True, help="the dataset declaration (YAML)")
  request.add_argument("--examples", required=True,
                       help="a TFRecord file of tf.train.Example (plain or GZIP)")
  request.add_argument("--count", type=int, default=1, help="records sent (default: 1)")
  return parser


def request_lines(dataset: str, examples: str, count: int) -> List[str]:
  """The request body for the first `count` records of `examples`."""
  from dataset import declaration
  from dataset.records.format import BadRecord, read_records
  from serving import rest

  decl = declaration.load(dataset)
  storage.enable([examples])
  gfile = storage.gfile()
  if not gfile.exists(examples):
    raise ServingError(f"--examples: no file at {examples}")
  try:
    records = list(read_records(examples, limit=count, opener=gfile.GFile))
  except BadRecord as e:
    raise ServingError(f"{examples}: expected TFRecords of tf.train.Example, found a "
                       f"broken record at {e}") from None
  return [rest.request_body(records, rest.inputs(decl))]


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  serving_dir = getattr(args, "serving_dir", None) or os.path.join(
      getattr(args, "output_dir", ""), getattr(args, "pipeline", ""), "serving")
  try:
    if args.command == "request":
      lines = request_lines(args.dataset, args.examples, args.count)
    elif args.command == "rollback":
      lines = history.rollback_lines(serving_dir, args.to)
    else:
      lines = history.version_lines(serving_dir)
  except (ServingError, storage.StorageError, DeclarationError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 0

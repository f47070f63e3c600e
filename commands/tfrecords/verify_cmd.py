"""`tfrecords verify`: check the length and data CRC of every record.

Exits 1 if any file has a bad record, naming the file and the byte offset of
its first bad record.
"""

import sys

from commands.tfrecords.inspect_cmd import expand
from dataset.records.verify import verify_file


def add_parser(commands) -> None:
  p = commands.add_parser("verify", help="check every record's CRCs; exit 1 on any bad file",
                          description=__doc__)
  p.add_argument("paths", nargs="+", help="TFRecord files, globs or folders (plain or GZIP)")
  p.set_defaults(run=run)


def run(args) -> int:
  try:
    files = expand(args.paths)
  except FileNotFoundError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  reports = [verify_file(path) for path in files]
  for report in reports:
    print(report.line())
  bad = [r for r in reports if not r.ok]
  total = sum(r.records for r in reports)
  print(f"{len(reports) - len(bad)} file(s) ok, {len(bad)} bad; {total} good records")
  return 1 if bad else 0

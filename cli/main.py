"""The `tfrecords` command line: tools around the dataset declaration.

    tfrecords schema DECLARATION [--output FILE]
"""

import argparse
import sys
from typing import List, Optional

from cli import schema_cmd


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="tfrecords", description="Tools for TFRecord datasets of tf.train.Example.")
  commands = parser.add_subparsers(dest="command", required=True)
  for module in (schema_cmd,):
    module.add_parser(commands)
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  return args.run(args)


if __name__ == "__main__":
  sys.exit(main())

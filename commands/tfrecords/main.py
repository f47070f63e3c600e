"""The `tfrecords` command line: tools around the dataset declaration.

    tfrecords convert images|table|arrays ...   raw data -> sharded TFRecords
    tfrecords inspect FILES...                   counts, feature spec, examples
    tfrecords verify FILES...                    every record's CRCs
    tfrecords check DECLARATION                  copies, leaks, unusable images
    tfrecords schema DECLARATION                 a starting schema to curate
"""

import argparse
import sys
from typing import List, Optional

from commands.tfrecords import check_cmd, convert_cmd, inspect_cmd, schema_cmd, verify_cmd
from runtime import startup


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="tfrecords", description="Tools for TFRecord datasets of tf.train.Example.")
  commands = parser.add_subparsers(dest="command", required=True)
  for module in (convert_cmd, inspect_cmd, verify_cmd, check_cmd, schema_cmd):
    module.add_parser(commands)
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  """The `tfrecords` command. Without `argv` it is the program (the
  `tfrecords` script pyproject.toml installs calls it so, not through
  `python -m`'s __main__.py), so it sets the process up first, as every
  entry point does: the Keras choice, and TensorFlow quiet about CUDA. A
  caller passing `argv` has set up its own process."""
  if argv is None:
    startup.start(quiet=True)
  args = build_parser().parse_args(argv)
  return args.run(args)


if __name__ == "__main__":
  sys.exit(main())

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
  args = build_parser().parse_args(argv)
  return args.run(args)


def script() -> int:
  """The `tfrecords` command (pyproject.toml's script, and `python -m
  commands.tfrecords`): the process set up first, quiet (runtime/startup.py:
  TensorFlow's CUDA and TensorRT lines, the libraries' warnings), so a
  subcommand that loads TensorFlow prints only its own lines."""
  startup.start(quiet=True)
  return main()


if __name__ == "__main__":
  sys.exit(script())

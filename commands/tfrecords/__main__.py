"""`python -m commands.tfrecords ...` is the `tfrecords` command."""

import sys

from commands.tfrecords.main import script

if __name__ == "__main__":
  sys.exit(script())

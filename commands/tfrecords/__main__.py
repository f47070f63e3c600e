"""`python -m commands.tfrecords ...` is the `tfrecords` command."""

import sys

from commands.tfrecords.main import main

if __name__ == "__main__":
  sys.exit(main())

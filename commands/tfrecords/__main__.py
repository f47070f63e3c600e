"""`python -m commands.tfrecords ...` is the `tfrecords` command."""

import sys

from runtime import startup

if __name__ == "__main__":
  startup.start(quiet=True)
  from commands.tfrecords.main import main

  sys.exit(main())

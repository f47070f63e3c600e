"""`python -m cli ...` is the `tfrecords` command."""

import sys

import startup

if __name__ == "__main__":
  startup.start(quiet=True)
  from cli.main import main

  sys.exit(main())

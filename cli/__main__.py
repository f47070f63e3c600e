"""`python -m cli ...` is the `tfrecords` command."""

import sys

import startup

startup.start(quiet=True)

# isort: split
from cli.main import main

sys.exit(main())

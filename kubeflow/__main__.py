"""Entry point: python -m kubeflow (see kubeflow/cli.py)."""

import sys

import startup

# Before TensorFlow loads: the same quiet start-up as local runs.
startup.start(quiet=not {"-v", "--verbose"} & set(sys.argv[1:]))

# isort: split
import storage
from kubeflow.cli import main

storage.exit(main())

"""Entry point: python -m kubeflow (see kubeflow/cli.py)."""

import sys

import startup

if __name__ == "__main__":
  # Before TensorFlow loads: the same quiet start-up as local runs.
  startup.start(quiet=not {"-v", "--verbose"} & set(sys.argv[1:]))
  import storage
  from kubeflow.cli import main

  storage.exit(main())

"""Entry point: python -m commands.kubeflow (see commands/kubeflow/cli.py)."""

import sys

from runtime import startup

if __name__ == "__main__":
  # Before TensorFlow loads: the same quiet start-up as local runs.
  startup.start(quiet=not {"-v", "--verbose"} & set(sys.argv[1:]))
  from commands.kubeflow.cli import main
  from runtime import storage

  storage.exit(main())

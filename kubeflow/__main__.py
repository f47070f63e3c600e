"""Entry point: python -m kubeflow (see kubeflow/cli.py)."""

import sys

import components  # noqa: F401  (the Keras choice, before TF loads Keras)

# isort: split
from kubeflow.cli import main

sys.exit(main())

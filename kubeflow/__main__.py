"""Entry point: python -m kubeflow (see kubeflow/cli.py)."""

import sys

from pipeline import logs

# Before TensorFlow loads: the same quiet start-up as local runs (pipeline/logs.py).
logs.configure(verbose=bool({"-v", "--verbose"} & set(sys.argv[1:])))

# isort: split
import components  # noqa: E402, F401  (the Keras choice, before TF loads Keras; light)

# isort: split
import storage  # noqa: E402
from kubeflow.cli import main  # noqa: E402

storage.exit(main())

import sys

import storage  # noqa: F401  (before TFMA: tensorflow-io stays unloaded, see storage/)
from debug.cli import main

sys.exit(main())

"""`python -m cli ...` is the `tfrecords` command."""

import sys

from cli.main import main

sys.exit(main())

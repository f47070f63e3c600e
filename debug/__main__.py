import sys

from debug.cli import main

sys.exit(main())

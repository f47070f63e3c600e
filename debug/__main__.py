import startup

startup.start()  # before TFMA: tensorflow-io stays unloaded (storage/)

# isort: split
import storage
from debug.cli import main

# storage.exit: a rollback on s3:// loads tensorflow-io, whose shutdown aborts.
storage.exit(main())

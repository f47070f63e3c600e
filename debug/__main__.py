import storage  # (before TFMA: tensorflow-io stays unloaded, see storage/)
from debug.cli import main

# storage.exit: a rollback on s3:// loads tensorflow-io, whose shutdown aborts.
storage.exit(main())

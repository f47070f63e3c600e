"""Entry point: python -m serving versions|rollback (see serving/cli.py)."""

import startup

if __name__ == "__main__":
  startup.start(quiet=True)  # before TensorFlow loads
  import storage
  from serving.cli import main

  # storage.exit: a rollback on s3:// loads tensorflow-io, whose shutdown aborts.
  storage.exit(main())

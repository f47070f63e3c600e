"""Entry point: python -m retention --keep N [--delete] (see retention/__init__.py)."""

import startup

if __name__ == "__main__":
  startup.start(quiet=True)  # before TensorFlow loads
  import storage
  from retention.cli import main

  # storage.exit: on s3:// tensorflow-io's shutdown would abort.
  storage.exit(main())

"""Entry point: python -m commands.retention --keep N [--delete] (see store/retention/__init__.py)."""

from runtime import startup

if __name__ == "__main__":
  startup.start(quiet=True)  # before TensorFlow loads
  from commands.retention.cli import main
  from runtime import storage

  # storage.exit: on s3:// tensorflow-io's shutdown would abort.
  storage.exit(main())

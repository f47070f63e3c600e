"""Entry point: python -m commands.serving versions|rollback (see commands/serving/cli.py)."""

from runtime import startup

if __name__ == "__main__":
  startup.start(quiet=True)  # before TensorFlow loads
  from commands.serving.cli import main
  from runtime import storage

  # storage.exit: a rollback on s3:// loads tensorflow-io, whose shutdown aborts.
  storage.exit(main())

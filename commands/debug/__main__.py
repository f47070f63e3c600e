from runtime import startup

if __name__ == "__main__":
  startup.start()  # before TFMA: tensorflow-io stays unloaded (runtime/startup.py)
  from commands.debug.cli import main
  from runtime import storage

  # storage.exit: a command on s3:// loads tensorflow-io, whose shutdown aborts.
  storage.exit(main())

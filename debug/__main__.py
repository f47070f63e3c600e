import startup

if __name__ == "__main__":
  startup.start()  # before TFMA: tensorflow-io stays unloaded (storage/)
  import storage
  from debug.cli import main

  # storage.exit: a command on s3:// loads tensorflow-io, whose shutdown aborts.
  storage.exit(main())

"""One worker of a Trainer's job: `python -m trainer.worker INPUTS_URI`.

Every engine starts this same command in the project's image. It learns its
role from the engine's environment (trainer/jobs/roles.py), reads the inputs the
launcher wrote (trainer/jobs/inputs.py) and trains as the Trainer would in one
process (`trainer.run.train_here`): its own shard of the data, the chief's export
into the Trainer's output, the others' into temporary folders, checkpoints
under the output so that a restarted job resumes.
"""

import os

from runtime import startup
from trainer.jobs.job import QUIET_ENV

if __name__ == "__main__":  # importing this sets nothing up
  # On a cluster a worker's pod log keeps what the libraries log, as a
  # step's does; locally the runner's choice holds.
  startup.start(quiet=True if os.environ.get(QUIET_ENV) else None)

# isort: split
import argparse
import logging
import sys

from runtime import storage
from trainer.jobs import inputs, roles

log = logging.getLogger("trainer.worker")  # not __main__ under -m


def own_lines(quiet: bool) -> None:
  """This package's and the Trainer's own lines (role, shard, progress) at
  INFO, whatever the libraries' level: they are what a user reads. On a
  cluster also absl's, as in a step's log (the Trainer's notes: warm start,
  `resumed from step N of M`)."""
  handler = logging.StreamHandler(sys.stdout)
  handler.setFormatter(logging.Formatter("%(message)s"))
  for name in ("trainer",) + (() if quiet else ("absl",)):
    logger = logging.getLogger(name)
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    logger.propagate = False


def main(uri: str) -> int:
  storage.enable([uri])
  storage.check([uri], "the workers' inputs")
  role = roles.apply()  # before TensorFlow reads TF_CONFIG
  fn_args = inputs.read(uri)
  storage.enable(fn_args.train_files + [fn_args.serving_model_dir])
  log.info("training job worker: %s (pid %d)", roles.describe(role), os.getpid())
  from trainer import run  # TensorFlow loads here, after TF_CONFIG is set
  run.train_here(fn_args)
  return 0


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m trainer.worker",
                                   description="one worker of a Trainer's job (trainer/jobs/)")
  parser.add_argument("inputs", metavar="INPUTS_URI",
                      help="the job's inputs, as the launcher wrote them (trainer/jobs/inputs.py)")
  return parser


if __name__ == "__main__":
  args = build_parser().parse_args()
  own_lines(quiet=bool(os.environ.get(QUIET_ENV)))
  try:
    status = main(args.inputs)
  except roles.RoleError as e:
    print(f"error: {e}", file=sys.stderr)
    status = 2
  storage.exit(status)

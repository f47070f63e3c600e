"""The Trainer step with workers: write their inputs, run the job, wait.

`run_fn` (trainer/run.py) calls `launch` when the Trainer's custom_config
asks for workers. The step itself trains nothing; it returns once the job
succeeded and the chief's export is in the Trainer's output, which TFX's
executor then checks as it would after training here.
"""

import importlib
import logging
import sys

from trainer import jobs
from trainer.jobs import inputs
from trainer.jobs.job import Job, name_for, pod_spec

log = logging.getLogger("absl")  # the step's log on Kubeflow


def engine_module(engine: str):
  """The module that runs jobs on `engine` (each has `run(job)`)."""
  if engine not in jobs.ENGINES:
    raise ValueError(f"training engine: expected one of {', '.join(jobs.ENGINES)}, "
                     f"found {engine!r}")
  return importlib.import_module(f"trainer.jobs.{engine}")


def launch(fn_args) -> None:
  """Runs the Trainer's training as a job of workers; raises JobFailed or
  ClusterError naming what went wrong."""
  wanted = fn_args.custom_config[jobs.CONFIG_KEY]
  uri = inputs.write(fn_args)
  # On a cluster the image's python; locally this interpreter (the venv's).
  python = "python" if wanted["engine"] != "local" else sys.executable
  job = Job(name=name_for(fn_args.model_run_dir),
            command=[python, "-m", "trainer.worker", uri],
            workers=int(wanted["count"]), pod=pod_spec())
  log.info("training job %s: %d workers on %s; inputs %s", job.name, job.workers,
           wanted["engine"], uri)
  engine_module(wanted["engine"]).run(job)
  log.info("training job %s: succeeded", job.name)

"""The launching half of a Trainer step, as its own process, for the
stand-in cluster's tests: `python -m tests.trainer_step INPUTS_JSON`.

It runs what `run_fn` runs in a compiled Trainer step with workers
(`trainer.jobs.launch.launch`) on the FnArgs fields in INPUTS_JSON, with the
step pod's environment: KUBECONFIG, KFP_POD_NAME and HOSTNAME (the step's
pod) and TRAIN_JOB_POD. Exit 0 when the job succeeded, 1 with the error's line.
The fields are read into a plain namespace, not TFX's FnArgs: the launcher
reads only them, and a step that need not import TFX starts in a second.
"""

from runtime import startup

startup.start()

# isort: split
import json
import logging
import sys
import types

from runtime import storage
from trainer.jobs import launch
from trainer.jobs.job import ClusterError, JobFailed

if __name__ == "__main__":
  logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
  logging.getLogger("absl").setLevel(logging.INFO)
  status = 0
  try:
    with open(sys.argv[1]) as f:
      launch.launch(types.SimpleNamespace(**json.load(f)))
  except (JobFailed, ClusterError) as e:
    # One write of the whole line: print writes the text and its newline
    # apart, and google-auth's background lookup of the service account's
    # allowed locations (no network here) logs its retries to stderr, which
    # shares the pipe, in between (a fresh clone saw the line cut so).
    sys.stdout.write(f"error: {e}\n")
    sys.stdout.flush()
    status = 1
  storage.exit(status)

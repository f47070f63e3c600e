"""What `startup.start` does to the process; see the package's docstring.

Nothing here runs when imported: every change to the environment, to
`sys.modules` or to logging is inside `start` (and `allow_tensorflow_io`,
which `storage.enable` calls).
"""

import getpass
import logging
import os
import sys
import warnings
from typing import Optional

from runtime.lazy_imports import lazy_components

KERAS_ENV = {"TF_USE_LEGACY_KERAS": "1"}
NOISY_LOGGERS = ("absl", "tensorflow", "apache_beam", "tfx", "ml_metadata",
                 "google", "googleapiclient", "urllib3", "kfp", "h5py")
_QUIET_WARNINGS = "ignore::FutureWarning,ignore::DeprecationWarning,ignore::UserWarning"


def start(quiet: Optional[bool] = None) -> None:
  """Sets this process up; call it first, before anything imports TensorFlow.

  Args:
    quiet: True for errors only, False for every library's INFO logs, None
      to leave logging as the libraries set it (a step's log on Kubeflow).
  """
  os.environ.update(KERAS_ENV)
  if os.environ.get("S3_ENDPOINT"):
    # Beam's s3:// file system (boto3: ImportExampleGen reads through it)
    # takes its endpoint from AWS_ENDPOINT_URL_S3, tensorflow-io from
    # S3_ENDPOINT: one setting serves both (runtime/storage.py).
    os.environ.setdefault("AWS_ENDPOINT_URL_S3", os.environ["S3_ENDPOINT"])
  if "tensorflow_io" not in sys.modules:
    sys.modules["tensorflow_io"] = None  # an import raises ImportError until `enable`
  lazy_components()
  if quiet is not None:
    _logs(quiet)


def allow_tensorflow_io() -> None:
  """Lifts `start`'s tensorflow-io guard, for `storage.enable` to load it."""
  if "tensorflow_io" in sys.modules and sys.modules["tensorflow_io"] is None:
    del sys.modules["tensorflow_io"]


def _logs(quiet: bool) -> None:
  from absl import logging as absl_logging
  if not quiet:
    logging.basicConfig(level=logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    for name in NOISY_LOGGERS:
      logging.getLogger(name).setLevel(logging.INFO)
    absl_logging.set_verbosity(absl_logging.INFO)
    return
  os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
  os.environ["PYTHONWARNINGS"] = _QUIET_WARNINGS
  for category in (FutureWarning, DeprecationWarning, UserWarning):
    warnings.filterwarnings("ignore", category=category)
  # A root handler at ERROR, made first, so that a library's later
  # basicConfig() call is a no-op rather than a second, chattier handler.
  logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
  for handler in logging.getLogger().handlers:
    handler.setLevel(logging.ERROR)
  for name in NOISY_LOGGERS:
    logging.getLogger(name).setLevel(logging.ERROR)
  # absl stays at INFO for the local runner's progress lines (runtime/progress/steps.py);
  # the root handler above drops the rest. Through absl's own flag: TF saves
  # and restores absl's verbosity around SavedModel exports, and would
  # otherwise reset a plain setLevel.
  absl_logging.set_verbosity(absl_logging.INFO)


def who() -> str:
  """The user running this, for the model card; a pod's user may have no
  name (a non-root uid without a passwd entry)."""
  try:
    return getpass.getuser()
  except (KeyError, OSError):
    return f"uid {os.getuid()}"

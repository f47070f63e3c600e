"""`python -m debug versions` and `python -m debug rollback`: the serving
dir's versions, and putting an earlier one back.

A version's own records say what it was trained on (`trained_on.json`) and,
for a rollback, which version it copies (`rollback.json`); its number is the
Unix time it was pushed. ML Metadata, when a local run's store is there,
adds the metric that blessed it. A Kubeflow run's store is the cluster's,
so for those only the records speak.
"""

import datetime
import os
from typing import Dict, List, Optional

import serving


def blessed_metrics(store, pipeline: str) -> Dict[str, str]:
  """version -> `accuracy 0.9845`, for every version a run of the pipeline pushed."""
  # Here, not at the top: a run's outcome imports TFX (10 s), which listing
  # or rolling back a serving dir without a store never needs.
  from metadata import outcome as run_outcome
  from metadata import store as st
  found = {}
  for run in st.runs(store, pipeline):
    result = run_outcome.outcome_of(store, run)
    if result.pushed_dir and result.value is not None:
      found[os.path.basename(result.pushed_dir.rstrip("/"))] = \
          f"{result.metric} {result.value:.4f}"
  return found


def version_lines(serving_dir: str, store=None, pipeline: str = "") -> List[str]:
  """One line per complete version, newest (the served one) first."""
  known = blessed_metrics(store, pipeline) if store is not None else {}
  lines = []
  for i, path in enumerate(serving.versions(serving_dir)):
    version = os.path.basename(path)
    when = datetime.datetime.fromtimestamp(int(version), datetime.timezone.utc)
    back = serving.rolled_back(path)
    source = back["to"] if back else version
    splits = serving.trained_on(path)
    parts = [version, "served" if i == 0 else "      ", f"pushed {when:%Y-%m-%d %H:%M:%S} UTC",
             f"trained on {', '.join(splits)}" if splits else "trained on: not recorded",
             known.get(source, "metric: not in ML Metadata" if store is not None
                       else "metric: no ML Metadata store here")]
    if back:
      parts.append(f"rollback: a copy of {back['to']} (replacing {back['from']})")
    lines.append("  ".join(parts))
  return lines or [f"no complete version in {serving_dir}"]


def rollback(serving_dir: str, to: Optional[str]) -> List[str]:
  """Pushes a copy of version `to` (default: the one before the newest) as
  the newest version. Deletes nothing.

  Raises:
    serving.ServingError: no such version, or nothing to roll back to.
  """
  path = serving.rollback(serving_dir, to)
  back = serving.rolled_back(path)
  return [f"rolled back: version {os.path.basename(path)} is a copy of {back['to']}, "
          f"now the newest (it was {back['from']}); nothing was deleted",
          "a model server that follows the newest version serves it at its next poll"]

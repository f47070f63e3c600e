"""The cache epoch of a compiled pipeline over spans: what keeps Kubeflow's
cache from handing back an output that retention deleted.

The open-source backend (2.0 to 2.17) serves a step from its cache when an
earlier task had the same fingerprint: the input artifacts' ML Metadata
ids, the input parameter values, the image, command and args
(`backend/src/v2/cacheutils/cache.go`). It looks the fingerprint up in the
API server's task table and takes the newest task, with no look at whether
its outputs still exist; and the table keeps a run's tasks after the run is
deleted (`apiserver/storage/run_store.go` DeleteRun, until after 2.17).

So every cached step with no input artifact (ImportExampleGen, and
BaselineModel over spans) also takes an epoch, passed on by SpanWindow,
which is never cached and reads it when each run starts. Every later step
is keyed on those steps' artifacts. The epoch is `<window>.<g>.<n>`: a
digest of the window's input config, a generation for all windows, and one
for this window. Before it deletes an output a cached step wrote in some
run, retention raises that run's window's number (store/retention/folders.py),
so no later run's fingerprint equals that run's: a run over the same
window runs its steps again instead of reading files that are gone. Other
windows keep their cache; a run with no window on record raises `g`.

The epoch also ends with a digest of `<pipeline root>/<pipeline>`, the
folder it is kept in: the backend's cache key holds no pipeline root
(`driver/cache.go`@2.17.0 line 126; `cacheutils/cache.go` wipes the output
URIs), so without it a run under a second root (`submit --pipeline-root`,
or the `kfp-launcher` ConfigMap's default that the UI uses) would start at
epoch 0 and be handed outputs under the first root that its retention
deleted, which the second root's retention never sees. With it, each root
keeps a cache of its own, and each root's retention sees every run that
could be handed its outputs.

The epochs live in `<pipeline root>/<pipeline>/_retention/epochs.json`,
beside the runs' folders on the open-source backend (on Vertex AI the runs
lie under the project's number: runtime/run_layout.py). Without spans, ImportExampleGen is never cached,
so every run's artifacts are new and no fingerprint can come back.
"""

import hashlib
import json
import re
from typing import Dict, Optional, Set

from runtime import run_layout
from runtime.storage import gfile

FILE = "_retention/epochs.json"
ALL = "*"
PARAMETER = "cache_epoch"  # SpanWindow's output; kubeflow/steps/retention.py wires it


def pipeline_folder(output_uri: str, task: str, pipeline: str = "") -> Optional[str]:
  """`<pipeline root>/<pipeline>` from an output URI of `task`, in either
  backend's run layout (runtime/run_layout.py); without the pipeline's
  name, the folder above the one holding `<task>/` (a local run's root)."""
  found = run_layout.locate([output_uri], pipeline, task) if pipeline else None
  if found:
    return found.home
  match = re.match(rf"^(.*)/[^/]+/{re.escape(task)}/", output_uri)
  return match.group(1) if match else None


def window_digest(input_config: str) -> str:
  return hashlib.sha256(input_config.encode()).hexdigest()[:12]


def window_of(epoch: str) -> Optional[str]:
  """The window digest an epoch value names, or None for no epoch."""
  return epoch.split(".", 1)[0] if epoch and "." in epoch else None


def _read(folder: str) -> Dict[str, int]:
  fs = gfile()
  path = f"{folder}/{FILE}"
  if not fs.exists(path):
    return {}
  with fs.GFile(path) as f:
    return json.load(f)


def value(folder: str, window: str) -> str:
  """The epoch a run over `window` (its digest) passes on: `<window>.<g>.<n>`
  and the digest of the folder, so of the pipeline root (see above)."""
  epochs = _read(folder)
  where = hashlib.sha256(folder.rstrip("/").encode()).hexdigest()[:8]
  return f"{window}.{epochs.get(ALL, 0)}.{epochs.get(window, 0)}.{where}"


def bump(folder: str, windows: Set[Optional[str]]) -> Dict[str, int]:
  """Raises each window's number (None: the generation of all); returns
  the epochs now."""
  epochs = _read(folder)
  for window in windows:
    key = window or ALL
    epochs[key] = epochs.get(key, 0) + 1
  fs = gfile()
  fs.makedirs(f"{folder}/{FILE.rsplit('/', 1)[0]}")
  with fs.GFile(f"{folder}/{FILE}", "w") as f:
    f.write(json.dumps(epochs, sort_keys=True))
  return epochs

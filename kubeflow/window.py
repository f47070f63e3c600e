"""The span window on Kubeflow: resolved when a run is submitted.

TFX's window (a resolver with SpanRangeStrategy) does not compile for
Kubeflow Pipelines v2, and the open-source backend runs no resolver at all.
So `compile` writes, beside the spec, what the window needs
(`window.json`: the data's patterns, the window size, the steps), and
`submit` lists the spans under the data root (gs:// included) and passes
the resolved window as runtime parameters: ImportExampleGen's input splits,
Transform's, the Trainer's and the Evaluator's splits.

`submit` also chooses the baseline, as local_runner.py does
(components/baseline.py): it computes the run's training key from the
window's files and the Trainer's settings (saved at compile), and passes it
with the served version to compare with, `served_version`, the newest that
this very run did not push. A span, once written, never changes, so
ImportExampleGen and BaselineModel are cached on these parameters: a submit
with no new span gets exactly the parameters of the last one, and Kubeflow
serves every step from its cache.

A Kubeflow recurring run passes the same parameters to every run, which
would read the same spans forever; so spans are retrained on a schedule by
running `submit` from a scheduler (docs/kubeflow.md), and `schedule` refuses
data with spans.
"""

import json
import os
from typing import Dict, Optional

from tfx.dsl.io import fileio

from dataset import spans
from dataset.declaration import Data
from pipeline.inputs import resolve
from pipeline.keys import to_json, trainer_config

FILE = "window.json"


def uses_spans(data: Data) -> bool:
  return any(spans.SPAN in p for p in (list(data.splits.values()) or [data.pattern]))


def save(config, output_dir: str) -> Optional[str]:
  """Writes window.json for data with spans; returns its path, or None."""
  data = config.declaration.data
  if not uses_spans(data):
    return None
  path = os.path.join(output_dir, FILE)
  with fileio.open(path, "w") as f:
    f.write(json.dumps({
        "data": {"root": data.root, "compression": data.compression,
                 "splits": dict(data.splits), "pattern": data.pattern,
                 "hash_buckets": dict(data.hash_buckets), "window": data.window},
        "materialize": config.materialize,
        "serving_dir": config.serving_dir,
        "settings": trainer_config(config),
        "train_steps": config.training.train_steps,
        "eval_steps": config.training.eval_steps}, indent=2, sort_keys=True))
  return path


def load(spec_path: str) -> Optional[dict]:
  """The window.json beside a compiled spec, or None (data without spans)."""
  path = os.path.join(os.path.dirname(os.path.abspath(spec_path))
                      if "://" not in spec_path else os.path.dirname(spec_path), FILE)
  if not fileio.exists(path):
    return None
  with fileio.open(path) as f:
    return json.load(f)


def resolve_params(saved: dict, data_root: Optional[str] = None,
                   train_steps: Optional[int] = None,
                   serving_dir: Optional[str] = None) -> Dict[str, str]:
  """The runtime parameters of the window as it stands now, and the baseline
  that goes with it: `served_version` and `training_key`.

  Raises:
    DeclarationError: when no span is found under the data root.
  """
  data = Data(**{**saved["data"], "root": data_root or saved["data"]["root"]})
  inputs = resolve(data, f"{FILE} (from compile)", serving_dir or saved["serving_dir"],
                   saved["settings"], saved["materialize"],
                   train_steps or saved["train_steps"], saved["eval_steps"])
  params = {name: to_json(value) for name, value in inputs.protos.items()}
  params.update(training_key=inputs.training_key, served_version=inputs.served_version)
  return params

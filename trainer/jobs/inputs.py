"""What the workers need: the `run_fn` inputs, as URIs, in one JSON file
under the Trainer's own output, so every worker (on any engine) reads the
same and a retried step writes the same."""

import json
import types
from typing import Any, Dict

from runtime.storage import gfile

# The FnArgs fields run_fn reads; everything else is the executor's.
FIELDS = ("train_files", "eval_files", "train_steps", "eval_steps", "transform_output",
          "transform_graph_path", "schema_path", "serving_model_dir", "model_run_dir",
          "base_model", "hyperparameters", "custom_config", "working_dir")


def path(model_run_dir: str) -> str:
  return f"{model_run_dir.rstrip('/')}/job/inputs.json"


def write(fn_args) -> str:
  """Writes fn_args' fields; returns the file's URI."""
  uri = path(fn_args.model_run_dir)
  gfile().makedirs(uri.rsplit("/", 1)[0])
  with gfile().GFile(uri, "w") as f:
    json.dump({name: getattr(fn_args, name) for name in FIELDS}, f, indent=1)
  return uri


def read(uri: str) -> types.SimpleNamespace:
  """The fields of the FnArgs the Trainer's executor made, from `write`'s
  file, as attributes. Not TFX's FnArgs class: importing it loads every
  TFX component, TFMA and Beam (about 1.5 s of each worker's start, again
  at each restart), and a worker reads only these fields."""
  with gfile().GFile(uri) as f:
    values: Dict[str, Any] = json.load(f)
  return types.SimpleNamespace(**{name: values.get(name) for name in FIELDS})

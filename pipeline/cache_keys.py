"""What each output's cache key holds, and a model's training key.

TFX reuses a component's earlier output when its inputs and exec properties
are unchanged. Transform and the Trainer name their code by import path, and
neither sees the training settings' effect on the other, so each one's
custom_config says exactly what changes its output: Transform's the
declaration's contract and its own code, the Trainer's the settings and
`trainer/`. A training setting then re-runs the Trainer and what follows,
not a 60-second Transform.
"""

import hashlib
import json
import os
from typing import List, Tuple

from google.protobuf import json_format, message

import dataset
import trainer
from components.transform import preprocessing
from components.transform import transform as transform_component
from components.transform.transform import CACHE_CONFIG_KEY
from dataset import spans
from pipeline.config import PipelineConfig


def transform_code() -> List[str]:
  """The code that runs inside Transform: the preprocessing_fn, our Transform
  component, and the declaration it reads."""
  return [preprocessing.__file__, transform_component.__file__,
          os.path.dirname(dataset.__file__)]


def trainer_code() -> List[str]:
  """The code that runs inside the Trainer: `trainer/` and the declaration."""
  return [os.path.dirname(trainer.__file__), os.path.dirname(dataset.__file__)]


def code_fingerprint(paths: List[str]) -> str:
  """A hash of the code in `paths` (files, or folders of .py files, their
  subfolders included).

  Transform and the Trainer name their functions by import path, so TFX's
  cache key would not change when that code does. Each one's hash goes into
  its own custom_config, so editing its code re-runs it (and what follows)
  instead of serving stale outputs from the cache, and editing the other's
  code does not. Each file counts with its path under the folder given, so
  a module moved into a subfolder, or added there, changes the hash too.
  """
  digest = hashlib.sha256()
  for path in paths:
    for label, file in _python_files(path):
      with open(file, "rb") as f:
        digest.update(label.encode() + b"\0" + f.read())
  return digest.hexdigest()[:16]


def _python_files(path: str) -> List[Tuple[str, str]]:
  """(name, path) of each .py file under a folder, sorted, its name the path
  relative to the folder; for a file, its own."""
  if not os.path.isdir(path):
    return [(os.path.basename(path), path)]
  found = []
  for folder, subfolders, files in os.walk(path):
    subfolders[:] = [d for d in subfolders if d != "__pycache__"]
    found += [(os.path.relpath(os.path.join(folder, n), path), os.path.join(folder, n))
              for n in files if n.endswith(".py")]
  return sorted(found)


def to_json(value):
  """A proto as a JSON string, which is how TFX passes protos to executors;
  strings, runtime parameters and placeholders (a SpanWindow output) as they
  are."""
  if not isinstance(value, message.Message):
    return value
  return json_format.MessageToJson(value, sort_keys=True, indent=None)


def analyzer_cache_dir(config: PipelineConfig) -> str:
  """Transform's analyzer cache, shared by the pipeline's runs
  (components/transform/transform.py)."""
  return f"{config.pipeline_root.rstrip('/')}/analyzer_cache/{config.pipeline_name}"


def image_fingerprints_dir(config: PipelineConfig) -> str:
  """The image check's fingerprints of spans, shared by the pipeline's runs
  (components/image_check/image_check.py)."""
  return f"{config.pipeline_root.rstrip('/')}/image_fingerprints/{config.pipeline_name}"


def checkpoint_root(config: PipelineConfig) -> str:
  """Where the Trainer keeps its checkpoints, by training key
  (trainer/checkpoints.py)."""
  return f"{config.pipeline_root.rstrip('/')}/checkpoints/{config.pipeline_name}"


def transform_config(config: PipelineConfig) -> dict:
  """Transform's custom_config: what changes its output, and nothing else
  (a training setting must not re-run a 60-second Transform)."""
  return {"declaration": config.declaration.contract(),
          "code": code_fingerprint(transform_code()),
          CACHE_CONFIG_KEY: analyzer_cache_dir(config)}


def trainer_config(config: PipelineConfig) -> dict:
  """The Trainer's custom_config: the declaration, the training settings,
  whether Transform materialized, and the Trainer's code."""
  return {"declaration": config.declaration.contract(),
          "training": config.training.to_dict(),
          "materialized": config.materialize,
          "code": code_fingerprint(trainer_code())}


def training_key(data_root: str, window: spans.Window, custom_config: dict,
                 window_params: dict) -> str:
  """What a model is trained from, apart from its base model: the window's
  files, the Trainer's custom_config (settings and code) and the window's
  parameters, computed alike on both runners. Recorded beside the model, so
  that a rerun can tell its own earlier model from the baseline it met
  (components/baseline/baseline.py)."""
  settings = {**custom_config, **{k: to_json(v) for k, v in window_params.items()}}
  digest = hashlib.sha256(spans.fingerprint(data_root, window.inputs).encode())
  digest.update(json.dumps(settings, sort_keys=True).encode())
  return digest.hexdigest()[:16]

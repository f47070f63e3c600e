"""SpanWindow: the first step of a compiled Kubeflow pipeline over spans.

A Kubeflow recurring run passes the same parameters to every run, and the
open-source backend runs no resolver (TFX's span resolution for KFP v2 is a
`lifecycle.preCacheCheck` hook that only Vertex AI calls). So the pipeline
finds its own window: this step lists the spans under `data_root` when the
run starts (a local path, gs:// or s3://), applies `data.window`, and
chooses the baseline and the training key as the local runner does
(pipeline/inputs.py). It hands them to the steps that need them as output
parameters (`taskOutputParameter` in the spec): ImportExampleGen's input
splits, Transform's splits, the Trainer's and the Evaluator's, and
BaselineModel's version and key, and the Tuner's choice: reuse a search or
run one (components/tuner/tuner.py).

Kubeflow never serves this step from its cache (kubeflow/compile/compiler.py). Every
step after it is keyed on the values it passes: a run that finds the same
window gets the same values, and so the same cache keys, and runs nothing
else; a new span changes the window, and what reads it runs again. So does
a new cache epoch for the window, which retention raises when it deletes
an output a cached step wrote over it (store/retention/cache_epoch.py).

Locally the runner resolves the same values before the run starts, and the
pipeline holds them as constants, so this step is only in compiled
pipelines over spans.
"""

import json
import os
from typing import Dict, Tuple

from absl import logging
from tfx.dsl.component.experimental.annotations import OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types.standard_artifacts import String

from dataset.declaration import Data
from dataset.tuning import Tuning
from pipeline.cache_keys import to_json
from pipeline.inputs import RunInputs, resolve
from pipeline.run_parameters import WindowParameters
from runtime import run_layout
from store.retention import cache_epoch as cache_epoch_file

WINDOW_STEP = "SpanWindow"  # the step's id: the function's name below
OUTPUTS = WindowParameters.names() + ("cache_epoch",)
Out = OutputArtifact[String]
Param = Parameter[str]


def resolve_window(spec_json: str, data_root: str, serving_dir: str,
                   train_steps: str) -> Tuple[RunInputs, Dict[str, str]]:
  """The run's inputs now, and the values the step passes on, by output name.

  Raises:
    DeclarationError: no complete span under the data root.
  """
  spec = json.loads(spec_json)
  try:
    steps = int(train_steps)
  except ValueError:
    raise ValueError(f"{WINDOW_STEP}: runtime parameter train_steps: expected an "
                     f"integer, found {train_steps!r}") from None
  inputs = resolve(Data(root=data_root, **spec["data"]), WINDOW_STEP,
                   serving_dir, spec["settings"],
                   spec["materialize"], steps, spec["eval_steps"],
                   Tuning.from_dict(spec.get("tuning")))
  values = {name: to_json(value) for name, value in inputs.protos.items()}
  values.update(served_version=inputs.served_version, training_key=inputs.training_key,
                drift_baseline=inputs.drift_baseline, tuning_search=inputs.tuning_search)
  return inputs, values


@component
def SpanWindow(data_root: Param, serving_dir: Param, train_steps: Param,
               window_spec: Param, input_config: Out, splits_config: Out,
               train_args: Out, eval_args: Out, example_splits: Out,
               served_version: Out, training_key: Out, drift_baseline: Out,
               tuning_search: Out, cache_epoch: Out) -> None:
  """Lists the spans, applies the window, chooses the baseline; passes them
  on, with the cache epoch (store/retention/cache_epoch.py)."""
  inputs, values = resolve_window(window_spec, data_root, serving_dir, train_steps)
  folder = cache_epoch_file.pipeline_folder(cache_epoch.uri, WINDOW_STEP,
                                            os.environ.get(run_layout.PIPELINE_ENV, ""))
  window = cache_epoch_file.window_digest(values["input_config"])
  values["cache_epoch"] = cache_epoch_file.value(folder, window) if folder else window
  logging.info(WINDOW_STEP + ": %s under %s; baseline: %s", inputs.window.describe(),
               data_root, inputs.served_version)
  print("\n".join([f"window: {inputs.window.describe()} under {data_root}",
                   *inputs.window.notes, f"baseline: {inputs.served_version}",
                   *([f"tuning search: {inputs.tuning_search} ({inputs.tuning_why})"]
                     if inputs.tuning_search else [])]), flush=True)
  outputs = {"input_config": input_config, "splits_config": splits_config,
             "train_args": train_args, "eval_args": eval_args,
             "example_splits": example_splits, "served_version": served_version,
             "training_key": training_key, "drift_baseline": drift_baseline,
             "tuning_search": tuning_search, "cache_epoch": cache_epoch}
  for name, artifact in outputs.items():
    artifact.value = values[name]

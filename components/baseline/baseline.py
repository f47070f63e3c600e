"""BaselineModel: the model in production, found in the serving directory.

The Evaluator compares every candidate with it, so that a worse model is
never pushed. TFX's LatestBlessedModel resolver finds the baseline in ML
Metadata instead, but the open-source Kubeflow Pipelines backend cannot run
resolver steps at all ("resolver executors not implemented"): it compiles,
then fails on the cluster. This is an ordinary container step, so the same
pipeline runs on LocalDagRunner, open-source Kubeflow and Vertex AI.

The newest version in the serving directory is the latest blessed model:
the Pusher pushes only blessed models, each into a new version folder named
by its Unix time. The step copies it into its output Model artifact (as
`Format-Serving/`, where the Evaluator looks) and records where it came
from (`source_model`). With nothing served yet, the output holds no model;
the Evaluator then runs without a baseline (components/evaluator/evaluator.py).

The Trainer warm-starts from it too, and gets this run's training key
beside it (`training_key.txt`), to record beside the model it exports.

Its cache key must change whenever the served model does, or a retrained
model would meet a stale baseline. Locally, `served_version` (chosen when the
pipeline is built, by `serving.baseline_version`) is that key and the version it
copies. That choice skips a version that this very run pushed before: one
whose training key (a hash of the data's files and the Trainer's settings
and code) is this run's. Without that skip, a rerun with nothing new would
meet its own earlier model as the baseline, warm-start from it, train again
and push again, every time. With it, the rerun meets the baseline its
earlier run met, and everything comes from the cache; a new span, new data
or a changed setting makes a new key, and the served model is the baseline
again.

On Kubeflow the pipeline is compiled long before it runs. With spans, its
first step (kubeflow/steps/span_window.py) chooses `served_version` and
`training_key` when it resolves the window, and passes them on as output
parameters, so a run with nothing new is served from Kubeflow's cache too.
Without spans,
`served_version` is "" (the newest version when the step runs) and this
step's cache is switched off in the compiled spec (kubeflow/compile/compiler.py).
"""

import os

from tensorflow.python.saved_model import loader_impl
from tfx.dsl.component.experimental.annotations import OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.io import fileio
from tfx.types import standard_artifacts
from tfx.utils import io_utils, path_utils

import serving
from trainer import export, warm_start

SOURCE = "source_model"


@component
def BaselineModel(
    serving_dir: Parameter[str],
    served_version: Parameter[str],
    training_key: Parameter[str],
    model: OutputArtifact[
        standard_artifacts.Model]) -> None:
  """Copies the served model `served_version` (or, if "", the newest) into
  `model`, or leaves it empty; hands the Trainer this run's `training_key`
  beside it (the Trainer records it beside the model it exports)."""
  if training_key:
    fileio.makedirs(model.uri)
    with fileio.open(os.path.join(model.uri, warm_start.KEY_FILE), "w") as f:
      f.write(training_key)
  if served_version == serving.NONE:
    source = None
  elif served_version:
    source = os.path.join(serving_dir, served_version)
  else:
    source = serving.latest(serving_dir)
  if source:
    io_utils.copy_dir(source, path_utils.serving_model_dir(model.uri))
    model.set_string_custom_property(SOURCE, source)
    with fileio.open(os.path.join(model.uri, warm_start.SOURCE), "w") as f:
      f.write(source)


def has_model(artifact) -> bool:
  """Whether a Model artifact holds a model (a BaselineModel output may not).

  Looks at the files, not at a custom property: custom properties come back
  as other types once Kubeflow has stored them.
  """
  return fileio.exists(os.path.join(path_utils.serving_model_path(artifact.uri),
                                    serving.SAVED_MODEL))


def served_source(artifact) -> str:
  """The served version a BaselineModel output copied, as its folder; ""
  when it holds no model. Read from the file it wrote, not its custom
  property (see `has_model`)."""
  path = os.path.join(artifact.uri, warm_start.SOURCE)
  if not has_model(artifact) or not fileio.exists(path):
    return ""
  with fileio.open(path) as f:
    return f.read().strip()


def served_signature(artifact) -> str:
  """The baseline's signature that takes serialized Examples, read from its
  saved_model.pb without loading the model (trainer/export.py
  `examples_signature`); the artifact holds a model."""
  path = path_utils.serving_model_path(artifact.uri)
  signatures = loader_impl.parse_saved_model(path).meta_graphs[0].signature_def
  return export.examples_signature(signatures)

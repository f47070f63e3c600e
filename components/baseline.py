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
the Evaluator then runs without a baseline (components/evaluator.py).

Its cache key must change whenever the served model does, or a retrained
model would meet a stale baseline. Locally, `served_version` (the newest
version's name when the pipeline is built) is that key: a rerun with nothing
new is served from the cache, a new push re-runs it. On Kubeflow the
pipeline is compiled long before it runs, so this step's cache is switched
off in the compiled spec instead (kubeflow/compile.py).
"""

import os
from typing import Optional

from tfx import v1 as tfx
from tfx.dsl.io import fileio
from tfx.proto import pusher_pb2
from tfx.utils import io_utils, path_utils, proto_utils

SOURCE = "source_model"


def latest_version(base_directory: str) -> Optional[str]:
  """The newest complete SavedModel version under base_directory, or None.

  Versions are folders named by a number (the Pusher's Unix time); anything
  else, such as a push still being written under a temporary name, and any
  folder without `saved_model.pb`, is skipped.
  """
  if not fileio.isdir(base_directory):
    return None
  versions = [v.rstrip("/") for v in fileio.listdir(base_directory)]
  for version in sorted((v for v in versions if v.isdigit()), key=int, reverse=True):
    path = os.path.join(base_directory, version)
    if fileio.exists(os.path.join(path, "saved_model.pb")):
      return path
  return None


def serving_directory(push_destination: str) -> str:
  """The filesystem base directory of a JSON PushDestination."""
  destination = pusher_pb2.PushDestination()
  proto_utils.json_to_proto(push_destination, destination)
  return destination.filesystem.base_directory


@tfx.dsl.components.component
def BaselineModel(
    push_destination: tfx.dsl.components.Parameter[str],
    served_version: tfx.dsl.components.Parameter[str],
    model: tfx.dsl.components.OutputArtifact[
        tfx.types.standard_artifacts.Model]) -> None:
  """Copies the newest pushed model into `model`, or leaves it empty."""
  del served_version  # only a cache key: see the module docstring
  source = latest_version(serving_directory(push_destination))
  if source:
    io_utils.copy_dir(source, path_utils.serving_model_dir(model.uri))
    model.set_string_custom_property(SOURCE, source)


def has_model(artifact) -> bool:
  """Whether a Model artifact holds a model (a BaselineModel output may not).

  Looks at the files, not at a custom property: custom properties come back
  as other types once Kubeflow has stored them.
  """
  return fileio.exists(os.path.join(path_utils.serving_model_path(artifact.uri),
                                    "saved_model.pb"))

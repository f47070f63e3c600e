"""The Pusher's executor: TFX's, but a model already in the serving dir is not pushed again.

The Evaluator re-blesses an unchanged model whenever its baseline changes
(after the first blessing, the model is its own baseline), and TFX's Pusher
then copies the same model into a new version folder. TF Serving would reload
it for nothing. This executor finds the identical SavedModel by its
`fingerprint.pb` and records that version instead of copying. Earlier
versions are never overwritten or deleted.
"""

import os

from absl import logging
from tfx.components.pusher import component as pusher_component
from tfx.components.pusher import executor
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

FINGERPRINT = "fingerprint.pb"


def _read(path: str) -> bytes:
  with fileio.open(path, "rb") as f:
    return f.read()


def find_pushed_copy(model_path: str, base_directory: str):
  """The version folder under base_directory that holds this same model, or None."""
  fingerprint = os.path.join(model_path, FINGERPRINT)
  if not fileio.exists(fingerprint) or not fileio.isdir(base_directory):
    return None
  wanted = _read(fingerprint)
  for version in sorted(fileio.listdir(base_directory), reverse=True):
    candidate = os.path.join(base_directory, version.rstrip("/"), FINGERPRINT)
    if fileio.exists(candidate) and _read(candidate) == wanted:
      return os.path.join(base_directory, version.rstrip("/"))
  return None


class Executor(executor.Executor):
  """Pushes a blessed model unless the serving dir already holds it."""

  def Do(self, input_dict, output_dict, exec_properties):
    if self.CheckBlessing(input_dict):
      destination = pusher_pb2.PushDestination()
      proto_utils.json_to_proto(
          exec_properties[standard_component_specs.PUSH_DESTINATION_KEY],
          destination)
      existing = find_pushed_copy(self.GetModelPath(input_dict),
                                  destination.filesystem.base_directory)
      if existing:
        logging.info("Model already pushed to %s; not copying it again.", existing)
        model_push = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        self._MarkPushed(model_push, pushed_destination=existing,
                         pushed_version=os.path.basename(existing))
        return
    super().Do(input_dict, output_dict, exec_properties)


class Pusher(pusher_component.Pusher):
  """TFX's Pusher, running the executor above."""
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

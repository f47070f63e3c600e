"""The Pusher's executor: TFX's, but a model already in the serving dir is not pushed again.

Pushes are atomic (serving.push). The Evaluator re-blesses an unchanged model whenever its baseline changes
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
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

import serving


class Executor(executor.Executor):
  """Pushes a blessed model, atomically, unless the serving dir already holds it."""

  def Do(self, input_dict, output_dict, exec_properties):
    model_push = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.PUSHED_MODEL_KEY])
    if not self.CheckBlessing(input_dict):
      self._MarkNotPushed(model_push)
      return
    destination = pusher_pb2.PushDestination()
    proto_utils.json_to_proto(
        exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
    if destination.WhichOneof("destination") != "filesystem":
      super().Do(input_dict, output_dict, exec_properties)
      return
    model_path = self.GetModelPath(input_dict)
    base = destination.filesystem.base_directory
    existing = serving.find_copy(model_path, base)
    if existing:
      logging.info("Model already pushed to %s; not copying it again.", existing)
      target = existing
    else:
      target = serving.push(model_path, base)
      logging.info("Model pushed to %s.", target)
    self._MarkPushed(model_push, pushed_destination=target,
                     pushed_version=os.path.basename(target))


class Pusher(pusher_component.Pusher):
  """TFX's Pusher, running the executor above."""
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

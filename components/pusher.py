"""The Pusher's executor: TFX's, but a model already in the serving dir is not pushed again.

Pushes are atomic (serving.push). The Evaluator re-blesses an unchanged model whenever its baseline changes
(after the first blessing, the model is its own baseline), and TFX's Pusher
then copies the same model into a new version folder. TF Serving would reload
it for nothing. This executor finds the identical SavedModel by its
`fingerprint.pb` and records that version instead of copying. Earlier
versions are never overwritten or deleted.

A push is judged against the model served when it lands. Two runs may
overlap (a manual run beside a scheduled one, kubeflow/pipelines#7261): if
another push came in after this run's Evaluator judged the candidate
against the version then served, the candidate was never compared with the
model it would replace, and it is not pushed; the run says so in one line
(`REFUSED`, read by metadata/outcome.py) and the next run judges against the
new version. What remains is the moment between this check and the copy,
seconds long, that no object store lets a writer lock.
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
from components.baseline import judged_against

REFUSED = "not_pushed_because"  # a custom property of the PushedModel


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
    refused = None if existing else landing_check(input_dict, model_path, base)
    if refused:
      logging.warning("Not pushed: %s", refused)
      self._MarkNotPushed(model_push)
      model_push.set_string_custom_property(REFUSED, refused)
      return
    if existing:
      logging.info("Model already pushed to %s; not copying it again.", existing)
      target = existing
    else:
      target = serving.push(model_path, base)
      logging.info("Model pushed to %s.", target)
    self._MarkPushed(model_push, pushed_destination=target,
                     pushed_version=os.path.basename(target))


def landing_check(input_dict, model_path: str, base: str):
  """Why the candidate must not land now (one line), or None: the version
  it was judged against is no longer the one it would replace."""
  [blessing] = input_dict[standard_component_specs.MODEL_BLESSING_KEY]
  judged = judged_against(blessing.uri)
  # The same choice as the run's baseline: versions trained with this
  # candidate's own training key do not count (serving.baseline_version).
  now = serving.baseline_version(base, serving.recorded_key(model_path))
  if judged is None or judged == now:
    return None
  def named(version):
    return "no served model" if version == serving.NONE else f"version {version}"
  return (f"the served model changed after the Evaluator judged this candidate: judged "
          f"against {named(judged)}, {named(now)} served now in {base} (another run pushed "
          f"in between); run again to judge it against the model served now")


class Pusher(pusher_component.Pusher):
  """TFX's Pusher, running the executor above."""
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

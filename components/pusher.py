"""The Pusher's executor: TFX's, but a model already in the serving dir is not pushed again.

Pushes are atomic (see `push`). The Evaluator re-blesses an unchanged model whenever its baseline changes
(after the first blessing, the model is its own baseline), and TFX's Pusher
then copies the same model into a new version folder. TF Serving would reload
it for nothing. This executor finds the identical SavedModel by its
`fingerprint.pb` and records that version instead of copying. Earlier
versions are never overwritten or deleted.
"""

import os
import time
import uuid

from absl import logging
from tfx.components.pusher import component as pusher_component
from tfx.components.pusher import executor
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, proto_utils

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


def push(model_path: str, base_directory: str) -> str:
  """Copies a SavedModel into a new version folder of base_directory.

  The copy is written under a temporary name (`.tmp-<version>-<id>`, which
  model servers and `components/baseline.latest_version` skip) and renamed
  into place only when complete, so the newest version is always a whole
  model, whatever interrupts the push. The version is the Unix time, and
  always above every version already there.

  Returns:
    The new version folder.
  """
  fileio.makedirs(base_directory)
  # An object store has no empty folders: a new serving dir lists as missing.
  listed = fileio.listdir(base_directory) if fileio.isdir(base_directory) else []
  versions = [int(v.rstrip("/")) for v in listed if v.rstrip("/").isdigit()]
  version = str(max([int(time.time())] + [v + 1 for v in versions]))
  temporary = os.path.join(base_directory, f".tmp-{version}-{uuid.uuid4().hex[:8]}")
  io_utils.copy_dir(model_path, temporary)
  target = os.path.join(base_directory, version)
  fileio.rename(temporary, target)
  return target


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
    existing = find_pushed_copy(model_path, base)
    if existing:
      logging.info("Model already pushed to %s; not copying it again.", existing)
      target = existing
    else:
      target = push(model_path, base)
      logging.info("Model pushed to %s.", target)
    self._MarkPushed(model_push, pushed_destination=target,
                     pushed_version=os.path.basename(target))


class Pusher(pusher_component.Pusher):
  """TFX's Pusher, running the executor above."""
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

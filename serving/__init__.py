"""The serving directory: one folder per pushed model version, and what each records.

This is the one module that knows its layout. The Pusher writes versions
(`push`, `find_copy`), BaselineModel and the run's inputs read the newest
(`latest`, `baseline_version`), the Trainer records what a model was trained
on (`record`) and the warm start and the verdict read it back (`trained_on`,
`recorded_key`).

The layout is TF Serving's: `<serving dir>/<version>/saved_model.pb`, where
the version is a number (the Pusher's Unix time) and the newest number is
the model served. A version counts only when it is complete: a numbered
folder holding `saved_model.pb`. A push being written sits under a
temporary name (`.tmp-<version>-<id>`) that is never taken for a version.

Every exported model also records, in `assets.extra/trained_on.json` (TF
Serving ignores `assets.extra`), the splits it was trained on and the run's
training key: a hash of the data's files and the Trainer's settings and
code (pipeline/keys.py). A run compares with the newest version not
trained with its own key (components/baseline.py says why).
"""

import json
import os
import time
import uuid
from typing import List, Optional, Sequence

import tensorflow as tf

import storage

SAVED_MODEL = "saved_model.pb"
FINGERPRINT = "fingerprint.pb"  # written by tf.saved_model.save since TF 2.12
TRAINED_ON = os.path.join("assets.extra", "trained_on.json")
TRAINING_KEY = "training_key"  # in trained_on.json
NONE = "none"  # a run's served version when nothing is served


def versions(base_directory: str) -> List[str]:
  """The complete versions' folders, newest first.

  Raises:
    StorageError: the serving dir's bucket cannot be reached (it would list
      as empty: "no model served").
  """
  storage.check([base_directory], "serving dir ")
  if not tf.io.gfile.isdir(base_directory):
    return []
  names = [name.rstrip("/") for name in tf.io.gfile.listdir(base_directory)]
  found = []
  for name in sorted((n for n in names if n.isdigit()), key=int, reverse=True):
    path = os.path.join(base_directory, name)
    if tf.io.gfile.exists(os.path.join(path, SAVED_MODEL)):
      found.append(path)
  return found


def latest(base_directory: str, not_key: str = "") -> Optional[str]:
  """The newest complete version's folder, or None; skipping versions whose
  training key is `not_key`, when given."""
  for path in versions(base_directory):
    if not (not_key and recorded_key(path) == not_key):
      return path
  return None


def baseline_version(base_directory: str, training_key: str) -> str:
  """The version a run compares with (and warm-starts from): the newest not
  trained with this run's `training_key`, or NONE."""
  served = latest(base_directory, not_key=training_key)
  return os.path.basename(served) if served else NONE


def _read(path: str) -> bytes:
  with tf.io.gfile.GFile(path, "rb") as f:
    return f.read()


def find_copy(model_path: str, base_directory: str) -> Optional[str]:
  """The complete version that holds this same SavedModel (by its
  `fingerprint.pb`), or None. Temporary folders of an interrupted push
  never count: their fingerprint may be there before their variables."""
  fingerprint = os.path.join(model_path, FINGERPRINT)
  if not tf.io.gfile.exists(fingerprint):
    return None
  wanted = _read(fingerprint)
  for path in versions(base_directory):
    candidate = os.path.join(path, FINGERPRINT)
    if tf.io.gfile.exists(candidate) and _read(candidate) == wanted:
      return path
  return None


def push(model_path: str, base_directory: str) -> str:
  """Copies a SavedModel into a new version folder of base_directory.

  The copy is written under a temporary name and renamed into place only when
  complete, so the newest version is always a whole model, whatever
  interrupts the push. The version is the Unix time, and always above every
  number already there, complete or not.

  Returns:
    The new version's folder.
  """
  tf.io.gfile.makedirs(base_directory)
  # An object store has no empty folders: a new serving dir lists as missing.
  listed = tf.io.gfile.listdir(base_directory) if tf.io.gfile.isdir(base_directory) else []
  numbers = [int(n.rstrip("/")) for n in listed if n.rstrip("/").isdigit()]
  version = str(max([int(time.time())] + [n + 1 for n in numbers]))
  temporary = os.path.join(base_directory, f".tmp-{version}-{uuid.uuid4().hex[:8]}")
  _copy_tree(model_path, temporary)
  target = os.path.join(base_directory, version)
  tf.io.gfile.rename(temporary, target)
  return target


def _copy_tree(source: str, target: str) -> None:
  for folder, _, files in tf.io.gfile.walk(source):
    into = os.path.join(target, os.path.relpath(folder, source))
    tf.io.gfile.makedirs(into)
    for name in files:
      tf.io.gfile.copy(os.path.join(folder, name), os.path.join(into, name), overwrite=True)


def record(export_dir: str, train_splits: Sequence[str], training_key: str) -> None:
  """Writes what a model was trained on beside its SavedModel."""
  tf.io.gfile.makedirs(os.path.dirname(os.path.join(export_dir, TRAINED_ON)))
  with tf.io.gfile.GFile(os.path.join(export_dir, TRAINED_ON), "w") as f:
    json.dump({"train_splits": list(train_splits), TRAINING_KEY: training_key}, f)


def _trained_on(model_dir: str) -> dict:
  path = os.path.join(model_dir, TRAINED_ON)
  if not tf.io.gfile.exists(path):
    return {}
  with tf.io.gfile.GFile(path) as f:
    return json.load(f)


def trained_on(model_dir: str) -> Optional[List[str]]:
  """The training splits a model records, or None if it does not."""
  return _trained_on(model_dir).get("train_splits")


def recorded_key(model_dir: str) -> str:
  """The training key a model records, or "" if it does not."""
  return _trained_on(model_dir).get(TRAINING_KEY) or ""

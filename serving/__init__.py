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

On a local disk the finished copy is renamed into place, atomically. On an
object store (gs://, s3://) there is no such rename: a folder is a prefix,
listed from its first object on, and tensorflow-io's folder rename copies
object by object in listing order, `saved_model.pb` before `variables/`. So
there the finished copy is copied again into the numbered folder with
`saved_model.pb` last: once a server can find the SavedModel, every file of
it is there. What no order of writes can hide on an object store is the
numbered prefix itself while its files arrive; a server that tries it then
finds no SavedModel and tries again at its next poll (TF Serving keeps
serving the version it has). A push killed half-way leaves no numbered
folder that holds `saved_model.pb` without the rest, and the next push
takes a number above it.

Beside the versions, `tuning/<search id>/` holds the hyperparameter
searches (`searches_dir`; components/tuner/record.py writes what is inside): a search
found for one model is found again by every later run of the pipeline, on
either runner.

A rollback (serving/history.py) pushes a copy of an earlier version as the
newest, recording in `assets.extra/rollback.json` which version it copies
and which it replaced; nothing is ever deleted. A pushed version also holds,
in `assets.extra/blessed.json`, the Evaluator's judgement that let it in
(components/evaluator/evaluator.py), so `python -m commands.serving versions` lists what
blessed each version from the serving dir alone, on either runner.

Every exported model also records, in `assets.extra/trained_on.json` (TF
Serving ignores `assets.extra`), the splits it was trained on and the run's
training key: a hash of the data's files and the Trainer's settings and
code (pipeline/cache_keys.py). A run compares with the newest version not
trained with its own key (components/baseline/baseline.py says why).
"""

import json
import os
import time
import uuid
from typing import List, Optional, Sequence

from runtime import storage

SAVED_MODEL = "saved_model.pb"
FINGERPRINT = "fingerprint.pb"  # written by tf.saved_model.save since TF 2.12
TRAINED_ON = os.path.join("assets.extra", "trained_on.json")
ROLLBACK = os.path.join("assets.extra", "rollback.json")
BLESSED = os.path.join("assets.extra", "blessed.json")  # the Evaluator's judgement
CARD = os.path.join("assets.extra", "model_card.md")  # components/pusher/model_card.py
CARD_HTML = os.path.join("assets.extra", "model_card.html")
TRAINING_KEY = "training_key"  # in trained_on.json
NONE = "none"  # a run's served version when nothing is served
SEARCHES = "tuning"  # the hyperparameter searches' folder


class ServingError(ValueError):
  """A serving-dir operation that cannot be done; says why in one line."""


def searches_dir(base_directory: str) -> str:
  return os.path.join(base_directory, SEARCHES)


def versions(base_directory: str) -> List[str]:
  """The complete versions' folders, newest first.

  Raises:
    StorageError: the serving dir's bucket cannot be reached (it would list
      as empty: "no model served").
  """
  storage.check([base_directory], "serving dir ")
  if not storage.gfile().isdir(base_directory):
    return []
  names = [name.rstrip("/") for name in storage.gfile().listdir(base_directory)]
  found = []
  for name in sorted((n for n in names if n.isdigit()), key=int, reverse=True):
    path = os.path.join(base_directory, name)
    if storage.gfile().exists(os.path.join(path, SAVED_MODEL)):
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
  with storage.gfile().GFile(path, "rb") as f:
    return f.read()


def find_copy(model_path: str, base_directory: str) -> Optional[str]:
  """The complete version that holds this same SavedModel (by its
  `fingerprint.pb`), or None. Temporary folders of an interrupted push
  never count: their fingerprint may be there before their variables."""
  fingerprint = os.path.join(model_path, FINGERPRINT)
  if not storage.gfile().exists(fingerprint):
    return None
  wanted = _read(fingerprint)
  for path in versions(base_directory):
    candidate = os.path.join(path, FINGERPRINT)
    if storage.gfile().exists(candidate) and _read(candidate) == wanted:
      return path
  return None


def push(model_path: str, base_directory: str, extra=None) -> str:
  """Copies a SavedModel into a new version folder of base_directory.

  The copy is written under a temporary name first, and put in place only
  when complete (see the module docstring for object stores), so the
  newest version is always a whole model, whatever interrupts the push.
  The version is the Unix time, and always above every number already
  there, complete or not.

  Args:
    extra: {path inside the version: text}, written into the copy before
      it is put in place.

  Returns:
    The new version's folder.
  """
  storage.check([base_directory], "serving dir ")
  storage.gfile().makedirs(base_directory)
  # An object store has no empty folders: a new serving dir lists as missing.
  listed = storage.gfile().listdir(base_directory) if storage.gfile().isdir(base_directory) else []
  numbers = [int(n.rstrip("/")) for n in listed if n.rstrip("/").isdigit()]
  version = str(max([int(time.time())] + [n + 1 for n in numbers]))
  temporary = os.path.join(base_directory, f".tmp-{version}-{uuid.uuid4().hex[:8]}")
  copy_tree(model_path, temporary)
  for name, text in (extra or {}).items():
    storage.gfile().makedirs(os.path.dirname(os.path.join(temporary, name)))
    with storage.gfile().GFile(os.path.join(temporary, name), "w") as f:
      f.write(text)
  target = os.path.join(base_directory, version)
  if storage.scheme(base_directory):
    copy_tree(temporary, target, last=SAVED_MODEL)
    storage.gfile().rmtree(temporary)
  else:
    storage.gfile().rename(temporary, target)
  return target


def copy_tree(source: str, target: str, last: str = "") -> None:
  """Copies every file; the top folder's file `last`, if any, after the rest."""
  final = None
  for folder, _, files in storage.gfile().walk(source):
    into = os.path.join(target, os.path.relpath(folder, source))
    storage.gfile().makedirs(into)
    for name in files:
      pair = (os.path.join(folder, name), os.path.join(into, name))
      if last and name == last and os.path.relpath(folder, source) == ".":
        final = pair
        continue
      storage.gfile().copy(*pair, overwrite=True)
  if final:
    storage.gfile().copy(*final, overwrite=True)


def record(export_dir: str, train_splits: Sequence[str], training_key: str) -> None:
  """Writes what a model was trained on beside its SavedModel."""
  storage.gfile().makedirs(os.path.dirname(os.path.join(export_dir, TRAINED_ON)))
  with storage.gfile().GFile(os.path.join(export_dir, TRAINED_ON), "w") as f:
    json.dump({"train_splits": list(train_splits), TRAINING_KEY: training_key}, f)


def _trained_on(model_dir: str) -> dict:
  path = os.path.join(model_dir, TRAINED_ON)
  if not storage.gfile().exists(path):
    return {}
  with storage.gfile().GFile(path) as f:
    return json.load(f)


def trained_on(model_dir: str) -> Optional[List[str]]:
  """The training splits a model records, or None if it does not."""
  return _trained_on(model_dir).get("train_splits")


def recorded_key(model_dir: str) -> str:
  """The training key a model records, or "" if it does not."""
  return _trained_on(model_dir).get(TRAINING_KEY) or ""

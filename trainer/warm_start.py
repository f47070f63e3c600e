"""Warm starts from the latest blessed model, and what the Trainer tells the run.

Every exported model carries, beside its SavedModel, the Keras weights
(`assets.extra/weights.npz`, in the model's own order) and what it was
trained on (serving/: the splits and the training key, which BaselineModel
hands over beside the base model). TF Serving ignores `assets.extra`. The next Trainer gets the served model as its base model
(BaselineModel's output) and starts from those weights when every weight has
the shape it needs; otherwise (the declaration changed: a feature, a class,
a categorical feature's values or buckets) it trains from scratch and says
why. A categorical feature's ids come from the declaration, not the data
(dataset/categories.py), so new or vanished categories keep the shapes.

What the Trainer decided goes into `notes.json` in its `model_run` folder,
which the local runner prints at the end of the run.
"""

import io
import json
import os
from typing import List, Optional, Sequence

import numpy as np
import tensorflow as tf

import serving

WEIGHTS = os.path.join("assets.extra", "weights.npz")
# Beside the base model's Format-Serving folder, written by BaselineModel:
SOURCE = "source_model.txt"  # where the served model came from
KEY_FILE = "training_key.txt"  # this run's training key
NOTES = "notes.json"


def save(model: tf.keras.Model, export_dir: str, train_splits: Sequence[str],
         training_key: str = "") -> None:
  """Writes the weights, the training splits and the training key beside a
  SavedModel."""
  tf.io.gfile.makedirs(os.path.join(export_dir, "assets.extra"))
  buffer = io.BytesIO()  # np.savez seeks; a GFile (gs://) cannot
  np.savez(buffer, *model.get_weights())
  with tf.io.gfile.GFile(os.path.join(export_dir, WEIGHTS), "wb") as f:
    f.write(buffer.getvalue())
  serving.record(export_dir, train_splits, training_key)


def _beside_base(base_model: Optional[str], name: str) -> Optional[str]:
  """A file BaselineModel wrote beside the base model's Format-Serving
  folder, or None."""
  if not base_model:
    return None
  path = os.path.join(os.path.dirname(base_model.rstrip("/")), name)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return f.read().strip()


def key_for(base_model: Optional[str]) -> str:
  """This run's training key, as BaselineModel handed it over, or ""."""
  return _beside_base(base_model, KEY_FILE) or ""


def source_of(base_model: str) -> str:
  """Where the base model was served from (BaselineModel records it)."""
  return _beside_base(base_model, SOURCE) or base_model


def warm_start(model: tf.keras.Model, base_model: Optional[str],
               categorical: Sequence = ()) -> str:
  """Loads the base model's weights into `model` if they fit.

  Args:
    model: the freshly built model.
    base_model: the base model's SavedModel folder, or None.
    categorical: the declaration's categorical features, whose ids the
      line states when there was a model to start from.

  Returns:
    One line for the run's output: where the weights came from, or why
    training starts from scratch.
  """
  if not base_model or not tf.io.gfile.exists(os.path.join(base_model, serving.SAVED_MODEL)):
    return "warm start: none, no model is served yet; training from scratch"
  return _warm_start(model, base_model) + ids_note(categorical)


def _warm_start(model: tf.keras.Model, base_model: str) -> str:
  source = source_of(base_model)
  path = os.path.join(base_model, WEIGHTS)
  if not tf.io.gfile.exists(path):
    return (f"warm start: none, {source} has no {WEIGHTS}; "
            "training from scratch")
  with tf.io.gfile.GFile(path, "rb") as f:
    saved = np.load(io.BytesIO(f.read()))
  arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
  wanted = model.get_weights()
  if len(arrays) != len(wanted):
    return (f"warm start: none, the architecture changed since {source} "
            f"({len(arrays)} weights there, {len(wanted)} now); training from scratch")
  for weight, old, new in zip(model.weights, arrays, wanted):
    if old.shape != new.shape:
      return (f"warm start: none, the architecture changed since {source} "
              f"({weight.name}: shape {list(old.shape)} there, {list(new.shape)} now); "
              "training from scratch")
  model.set_weights(arrays)
  return f"warm start: from {source}"


def ids_note(categorical: Sequence) -> str:
  """How the categorical features' ids were made (dataset/categories.py),
  which is what lets a warm start hold when categories come and go; ""
  without categorical features."""
  if not categorical:
    return ""
  parts = [f"{f.name} {len(f.values)} declared values + missing + {f.num_oov_buckets} "
           f"OOV bucket(s)" if f.values else f"{f.name} {f.hash_buckets} hash buckets"
           for f in categorical]
  return (f"; categorical ids from the declaration ({'; '.join(parts)}), so categories "
          "that come or go between spans change no weight's shape")


def write_notes(log_dir: Optional[str], notes: Sequence[str]) -> None:
  """Records the Trainer's decisions for the run's output."""
  if not log_dir:
    return
  tf.io.gfile.makedirs(log_dir)
  with tf.io.gfile.GFile(os.path.join(log_dir, NOTES), "w") as f:
    json.dump(list(notes), f)


def read_notes(log_dir: str) -> List[str]:
  path = os.path.join(log_dir, NOTES)
  if not tf.io.gfile.exists(path):
    return []
  with tf.io.gfile.GFile(path) as f:
    return json.load(f)

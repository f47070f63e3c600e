"""Where searches are kept, and whether a run searches or reuses one.

Each finished search is a folder `<serving dir>/tuning/<id>/` holding
`best_hyperparameters.txt` (keras-tuner's HyperParameters config, as TFX's
own Tuner writes it) and `search.json` (when, on which span, the trials),
written last: a folder without it is a search that did not finish. Ids sort
by time, so the latest search is the greatest id.

The serving dir is the one place every run of a pipeline reads and writes
on both runners: TF Serving loads only its numbered folders, and a Kubeflow
step reaches it through `push_destination`, so reuse needs no resolver
(the open-source backend runs none).
"""

import datetime
import json
import os
import uuid
from typing import Optional, Tuple

import tensorflow as tf

from dataset.tuning import Tuning

FOLDER = "tuning"
BEST = "best_hyperparameters.txt"
SEARCH = "search.json"
# Tuner.search values: the run chose, or decides when the step runs ("").
REUSE, NEW = "reuse:", "search:"


def searches_dir(serving_dir: str) -> str:
  return os.path.join(serving_dir, FOLDER)


def new_id() -> str:
  now = datetime.datetime.now(datetime.timezone.utc)
  return f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def latest(serving_dir: str) -> Optional[dict]:
  """The latest finished search's `search.json`, with its `folder`, or None."""
  base = searches_dir(serving_dir)
  if not tf.io.gfile.isdir(base):
    return None
  for name in sorted((n.rstrip("/") for n in tf.io.gfile.listdir(base)), reverse=True):
    path = os.path.join(base, name, SEARCH)
    if tf.io.gfile.exists(path):
      return {**read(path), "folder": os.path.join(base, name)}
  return None


def find(serving_dir: str, search_id: str) -> dict:
  """One search's record, by id.

  Raises:
    FileNotFoundError: naming the folder, when it is gone.
  """
  folder = os.path.join(searches_dir(serving_dir), search_id)
  path = os.path.join(folder, SEARCH)
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(f"search {search_id}: expected {path}, found nothing "
                            f"(removed since the run started?)")
  return {**read(path), "folder": folder}


def read(path: str):
  with tf.io.gfile.GFile(path) as f:
    return json.loads(f.read())


def save(serving_dir: str, search: dict, best_hyperparameters: dict) -> str:
  """Writes a finished search; `search.json` last. Returns its folder."""
  folder = os.path.join(searches_dir(serving_dir), search["id"])
  tf.io.gfile.makedirs(folder)
  with tf.io.gfile.GFile(os.path.join(folder, BEST), "w") as f:
    f.write(json.dumps(best_hyperparameters, sort_keys=True))
  with tf.io.gfile.GFile(os.path.join(folder, SEARCH), "w") as f:
    f.write(json.dumps(search, sort_keys=True, indent=1))
  return folder


def searched(tuning: Tuning) -> dict:
  """What a search searched, as its record holds it: `tuning:` but for
  `every` (when to search again does not change what a search finds)."""
  d = json.loads(json.dumps(tuning.to_dict()))
  d.pop("every")
  return d


def decide(tuning: Tuning, found: Optional[dict], newest_span: Optional[int],
           force: bool = False) -> Tuple[str, str]:
  """(`REUSE + id` or `NEW`, why in words): search when asked, when there is
  no search yet, when the declaration's `tuning:` changed since, or when the
  newest span is `tuning.every` spans past the latest search's."""
  if force:
    return NEW, "a new search was asked for (--tune)"
  if not found:
    return NEW, "no earlier search for this pipeline"
  if found.get("tuning") != searched(tuning):
    return NEW, f"the declaration's tuning: changed since search {found['id']}"
  span = found.get("span")
  if tuning.every and newest_span is not None and span is not None \
      and newest_span - span >= tuning.every:
    return NEW, (f"span {newest_span} is {newest_span - span} spans past search "
                 f"{found['id']} (span {span}); tuning.every is {tuning.every}")
  return REUSE + found["id"], describe(found)


def describe(found: dict) -> str:
  """`search <id> of <when> (span N): best accuracy 0.97 after 10 trials`."""
  span = f", span {found['span']}" if found.get("span") is not None else ""
  return (f"search {found['id']} ({found['finished']}{span}): best "
          f"{found['objective']} {found['best_score']:.4f} after "
          f"{len(found['trials'])} trials")

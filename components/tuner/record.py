"""Where searches are kept, and whether a run searches or reuses one.

Each finished search is a folder `<serving dir>/tuning/<id>/` holding
`best_hyperparameters.txt` (keras-tuner's HyperParameters config, as TFX's
own Tuner writes it) and `search.json` (when, on which span, the trials),
written last: a folder without it is a search that did not finish. The
latest search is the one that finished last. Its `oracle/` holds the
oracle's state, saved as each trial ends, which a search interrupted
before it finished resumes from.

The serving dir is the one place every run of a pipeline reads and writes
on both runners: TF Serving loads only its numbered folders, and a Kubeflow
step reaches it through the `serving_dir` parameter, so reuse needs no resolver
(the open-source backend runs none).
"""

import hashlib
import json
import os
from typing import Optional, Tuple

import tensorflow as tf

import serving
from dataset.tuning import Tuning

BEST = "best_hyperparameters.txt"
SEARCH = "search.json"
TRIALS = "trials.json"  # the Tuner's TunerResults: the search and why it ran or was reused


def search_id(tuning: Tuning, span: Optional[int], tune: str = "") -> str:
  """The id a search gets, known before it runs: what it searches, the
  newest span it sees, and the request that forced it. A run that plans a
  search and the run after it, which reuses that search, then pass the
  Tuner the same id: the same cache key, so a run with nothing new is
  served from the cache (on Kubeflow too)."""
  digest = hashlib.sha256(json.dumps([searched(tuning), span, tune],
                                     sort_keys=True).encode()).hexdigest()[:10]
  return f"{'all' if span is None else f'span{span}'}-{digest}"


def oracle_dir(serving_dir: str, search: str) -> str:
  """Where a search's oracle keeps its state as trials end: an interrupted
  search (a preempted Tuner step, a killed run) resumes from it."""
  return os.path.join(serving.searches_dir(serving_dir), search, "oracle")


def latest(serving_dir: str) -> Optional[dict]:
  """The latest finished search's `search.json`, with its `folder`, or None."""
  base = serving.searches_dir(serving_dir)
  if not tf.io.gfile.isdir(base):
    return None
  found = [f for f in (find(serving_dir, name.rstrip("/"))
                        for name in tf.io.gfile.listdir(base)) if f]
  return max(found, key=lambda f: f["finished_unix"], default=None)


def find(serving_dir: str, search: str) -> Optional[dict]:
  """One finished search's record, with its `folder`, or None."""
  folder = os.path.join(serving.searches_dir(serving_dir), search)
  path = os.path.join(folder, SEARCH)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return {**json.loads(f.read()), "folder": folder}


def save(serving_dir: str, search: dict, best_hyperparameters: dict) -> str:
  """Writes a finished search; `search.json` last. Returns its folder."""
  folder = os.path.join(serving.searches_dir(serving_dir), search["id"])
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


def plan(tuning: Tuning, found: Optional[dict], newest_span: Optional[int],
         tune: str = "") -> Tuple[str, str]:
  """(the search a run uses, why in words): a new one when asked (`tune`),
  when there is none yet, when the declaration's `tuning:` changed since the
  latest, or when the newest span is `tuning.every` spans past the latest's;
  else the latest (`found`)."""
  new = search_id(tuning, newest_span, tune)
  if tune:
    return new, "a new search was asked for (--tune)"
  if not found:
    return new, "no earlier search for this pipeline"
  if found.get("tuning") != searched(tuning):
    return new, f"the declaration's tuning: changed since search {found['id']}"
  span = found.get("span")
  if tuning.every and newest_span is not None and span is not None \
      and newest_span - span >= tuning.every:
    return new, (f"span {newest_span} is {newest_span - span} spans past search "
                 f"{found['id']} (span {span}); tuning.every is {tuning.every}")
  return found["id"], "reusing " + describe(found)


def choose(tuning: Tuning, serving_dir: str, newest_span: Optional[int], tune: str = "",
           search: str = "") -> Tuple[str, Optional[dict], str]:
  """The one plan of a run's search, made when the run starts (the local
  runner; SpanWindow on Kubeflow) and read again by the Tuner step.

  Args:
    search: the id chosen when the run started, if one was; the Tuner plans
      anew without it (Kubeflow without spans) or when `tune` asks for a
      new search at run time.

  Returns:
    (the search's id, its record when it exists and is to be reused or
    None to run it, why in words).
  """
  latest_found = latest(serving_dir)
  planned, why = plan(tuning, latest_found, newest_span, tune)
  if tune or not search:
    search = planned
  found = (latest_found if latest_found and latest_found["id"] == search
           else find(serving_dir, search))
  if found and not tune:
    return search, found, "reusing " + describe(found)
  # A new search that this plan would not start was asked for when the run
  # started: the local runner's --tune is in the id.
  return search, None, why if search == planned else (
      f"a new search was asked for when the run started (--tune): {search}")


def describe(found: dict) -> str:
  """`search <id> (<when>, span N): best accuracy 0.97 after 10 trials`."""
  span = f", span {found['span']}" if found.get("span") is not None else ""
  return (f"search {found['id']} ({found['finished']}{span}): best "
          f"{found['objective']} {found['best_score']:.4f} after "
          f"{len(found['trials'])} trials")

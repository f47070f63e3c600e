"""The Tuner's search in the run report: each trial's settings, score, steps
and time, the best marked; or which earlier search the run reused."""

import json
import os
from typing import List, Optional

import tensorflow as tf

from components.tuner.record import TRIALS
from store.report.html import Raw, esc, table


def load(results_uri: Optional[str]) -> dict:
  path = os.path.join(results_uri or "", TRIALS)
  if not results_uri or not tf.io.gfile.exists(path):
    return {}
  with tf.io.gfile.GFile(path) as f:
    return json.loads(f.read())


def _value(value) -> str:
  return f"{value:.4g}" if isinstance(value, float) else str(value)


def section_parts(search: dict) -> List[str]:
  if not search:
    return ['<p class="note">The Tuner wrote no results in this run.</p>']
  parts = [f"<p>{esc(search['why'])}.</p>",
           f"<p>Search <code>{esc(search['id'])}</code>: {esc(search['algorithm'])}, "
           f"{len(search['trials'])} trials, {esc(search['workers'])} worker(s), "
           f"{esc(search['seconds'])} s; objective {esc(search['objective'])} on the "
           f"eval split. The Trainer trains with the best trial's settings.</p>"]
  rows = []
  for i, trial in enumerate(search["trials"]):
    best = i == 0 and trial["score"] is not None
    rows.append([Raw("<strong>best</strong>") if best else "", trial["trial"],
                 ", ".join(f"{k}={_value(v)}" for k, v in sorted(trial["values"].items())),
                 "" if trial["score"] is None else f"{trial['score']:.4f}",
                 trial["steps"],
                 "" if trial["seconds"] is None else f"{trial['seconds']:.1f}",
                 "" if trial["worker"] is None else trial["worker"], trial["status"]])
  parts.append(table(["", "trial", "settings", search["objective"], "steps", "seconds",
                      "worker", "status"], rows, numeric=(3, 4, 5, 6)))
  return parts

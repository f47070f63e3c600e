"""ServingCheck's result in a run, as its InfraBlessing output holds it
(components/serving_check/check.py writes it): for the run's outcome and its report."""

import json
from typing import Optional

import tensorflow as tf

from components.serving_check.check import RESULT_FILE
from store.metadata import store as st


def load(store, run: st.Run) -> Optional[dict]:
  """ServingCheck's result in this run, or None when it did not run."""
  return read_result(st.output(store, run, "ServingCheck", "infra_blessing"))


def read_result(artifact) -> Optional[dict]:
  """The result a ServingCheck output (its InfraBlessing) holds, with
  whether it checked at all; None for no artifact or no result file."""
  if artifact is None:
    return None
  return read_at(artifact.uri, bool(artifact.custom_properties["checked"].int_value))


def read_at(uri: str, checked: bool) -> Optional[dict]:
  """The result in a ServingCheck output's folder, with `checked` added;
  None without a result file. (The report reads it from either runner's
  record: store/metadata/run_record.py.)"""
  path = f"{uri}/{RESULT_FILE}"
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return {**json.loads(f.read()), "checked": checked}

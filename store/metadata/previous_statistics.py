"""The earlier span's statistics, from an earlier local run, through ML Metadata.

A local run whose window does not hold the span before the newest (a window
of one) finds that span's statistics in its own store: the newest
ExampleStatistics artifact with the span's training split. StatisticsGen
computed them when that span was new; reading them costs nothing. Data split
by hash names its splits `train` and `eval` whatever the span, so there the
drift check reads the earlier span's files instead (components/drift_gate/drift_gate.py).
"""

import json
import os

from ml_metadata.proto import metadata_store_pb2

from dataset import spans
from store.metadata import store as st


def find(metadata_path: str, split: str) -> str:
  """The newest statistics folder of `split` in the store, or ""."""
  if not (split and os.path.isfile(metadata_path)) or not spans.is_span_split(split):
    return ""
  store = st.open_store(metadata_path)
  found = store.get_artifacts_by_type("ExampleStatistics")
  for artifact in sorted(found, key=lambda a: a.id, reverse=True):
    names = artifact.properties.get("split_names")
    if (artifact.state == metadata_store_pb2.Artifact.LIVE and names
        and split in json.loads(names.string_value)):
      return os.path.join(artifact.uri, f"{spans.SPLIT_FOLDER_PREFIX}{split}")
  return ""

"""store/metadata/previous_statistics.py: the earlier span's statistics, found
in a local run's own ML Metadata store (a SQLite file in tmp_path): the newest
live statistics that hold that span's training split."""

import os

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2 as pb

from store.metadata import previous_statistics


def _store(path: str, splits_by_uri) -> None:
  """A store whose ExampleStatistics are `(uri, split names, state)`, in order."""
  config = pb.ConnectionConfig()
  config.sqlite.filename_uri = path
  config.sqlite.connection_mode = pb.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
  store = metadata_store.MetadataStore(config)
  kind = pb.ArtifactType(name="ExampleStatistics")
  kind.properties["split_names"] = pb.STRING
  type_id = store.put_artifact_type(kind)
  for uri, names, state in splits_by_uri:
    artifact = pb.Artifact(type_id=type_id, uri=uri, state=state)
    artifact.properties["split_names"].string_value = names
    store.put_artifacts([artifact])


def test_the_newest_live_statistics_of_the_span_are_found(tmp_path):
  path = str(tmp_path / "metadata.sqlite")
  _store(path, [("/r/StatisticsGen/1", '["train_span1", "eval_span1"]', pb.Artifact.LIVE),
                ("/r/StatisticsGen/2", '["train_span1", "train_span2"]', pb.Artifact.LIVE),
                ("/r/StatisticsGen/3", '["train_span2", "eval_span2"]', pb.Artifact.LIVE),
                ("/r/StatisticsGen/4", '["train_span1"]', pb.Artifact.DELETED)])
  assert previous_statistics.find(path, "train_span1") == os.path.join(
      "/r/StatisticsGen/2", "Split-train_span1")
  assert previous_statistics.find(path, "train_span2") == os.path.join(
      "/r/StatisticsGen/3", "Split-train_span2")
  assert previous_statistics.find(path, "train_span7") == ""


def test_without_a_store_or_a_span_split_nothing_is_found(tmp_path):
  path = str(tmp_path / "metadata.sqlite")
  assert previous_statistics.find(path, "train_span1") == ""  # no store yet
  _store(path, [("/r/StatisticsGen/1", '["train", "eval"]', pb.Artifact.LIVE)])
  # Data split by hash: its splits name no span, so the gate reads the files.
  assert previous_statistics.find(path, "train") == ""
  assert previous_statistics.find(path, "") == ""

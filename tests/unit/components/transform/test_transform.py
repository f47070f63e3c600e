"""components/transform/transform.py: the analyzer cache a run updated is published to
the folder later runs read, whole or not at all (its Transform runs in
tests/e2e/test_retraining.py and on s3:// in tests/e2e/test_kubeflow_*)."""

from components.transform import transform


def _cache(folder, **keys):
  for key, files in keys.items():
    (folder / key).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
      (folder / key / name).write_text(text)


def test_only_new_or_grown_spans_are_published(tmp_path):
  shared, updated = tmp_path / "shared", tmp_path / "run"
  _cache(shared, span1={"a": "1"}, span2={"a": "2"})
  _cache(updated, span1={"a": "1"}, span2={"a": "2", "b": "more"}, span3={"a": "3"},
         uncached_x={"a": "x"})
  assert transform.publish(str(updated), str(shared)) == ["span2", "span3"]
  assert sorted(p.name for p in shared.iterdir()) == ["span1", "span2", "span3"]
  assert (shared / "span2" / "b").read_text() == "more"
  # Published again with nothing new: nothing moves.
  assert transform.publish(str(updated), str(shared)) == []


def test_a_preprocessing_without_analyzers_publishes_nothing(tmp_path):
  """On an object store its empty output folder does not exist at all."""
  assert transform.publish(str(tmp_path / "never-written"), str(tmp_path / "shared")) == []
  assert not (tmp_path / "shared").exists()


def test_only_a_spans_split_has_a_cache_key():
  assert transform.span_key("gs://b/Examples/7/Split-train_span4/*") is not None
  assert transform.span_key("gs://b/Examples/7/Split-train/*") is None

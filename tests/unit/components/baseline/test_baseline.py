"""components/baseline/baseline.py: BaselineModel hands the Evaluator the served
model to judge against, as TFX runs its executor, on a serving dir laid out
as the Pusher lays it out."""

import os

from tfx.types import standard_artifacts

import serving
from components.baseline import baseline
from trainer import warm_start


def _serving_dir(tmp_path, *versions):
  for version in versions:
    folder = tmp_path / "serving" / version
    folder.mkdir(parents=True)
    (folder / serving.SAVED_MODEL).write_bytes(b"model " + version.encode())
  return str(tmp_path / "serving")


def _run(tmp_path, serving_dir: str, served_version: str, key: str = "k1"):
  model = standard_artifacts.Model()
  model.uri = str(tmp_path / "baseline" / (served_version or "newest"))
  executor = baseline.BaselineModel.EXECUTOR_SPEC.executor_class()
  executor.Do({}, {"model": [model]}, {"serving_dir": serving_dir,
                                       "served_version": served_version,
                                       "training_key": key})
  return model


def test_the_newest_served_version_is_the_baseline(tmp_path):
  served = _serving_dir(tmp_path, "100", "200")
  model = _run(tmp_path, served, "")
  assert baseline.has_model(model)
  assert baseline.served_source(model) == os.path.join(served, "200")
  with open(os.path.join(model.uri, warm_start.KEY_FILE)) as f:
    assert f.read() == "k1"


def test_the_version_the_run_chose_wins_over_a_newer_one(tmp_path):
  """SpanWindow chose version 100 when the run started; 200 landed since."""
  served = _serving_dir(tmp_path, "100", "200")
  assert baseline.served_source(_run(tmp_path, served, "100")) == os.path.join(served, "100")


def test_nothing_served_is_an_output_without_a_model(tmp_path):
  served = _serving_dir(tmp_path)
  for version in ("", serving.NONE):
    model = _run(tmp_path, served, version)
    assert not baseline.has_model(model) and baseline.served_source(model) == ""

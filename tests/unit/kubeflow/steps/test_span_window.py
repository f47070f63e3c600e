"""SpanWindow, the first step of a compiled pipeline over spans: what it
finds under the data root, what it passes on, and what a rerun with nothing
new passes (the same values, so the same cache keys for every later step)."""

import json

import pytest
from tfx.types import standard_artifacts

from dataset import declaration
from kubeflow.steps import span_window as window_step
from pipeline.cache_keys import trainer_config
from pipeline.config import PipelineConfig, TrainingConfig
from pipeline.pipeline import window_spec
from store.retention import cache_epoch
from tests.conftest import span_declaration


def _spec(tmp_path, spans=(1, 2, 3), window=2):
  path, root = span_declaration(tmp_path, spans=spans, window=window)
  config = PipelineConfig(pipeline_name="spans", pipeline_root="gs://b/p",
                          serving_dir="", declaration=declaration.load(str(path)),
                          training=TrainingConfig(train_steps=50))
  return window_spec(config, trainer_config(config)), root


def _run_step(spec, root, serving, tmp_path, run="run1") -> dict:
  """Runs the step's real executor; returns what it wrote, by output. The
  outputs lie where the backend puts them: <root>/<pipeline>/<run>/<task>/…"""
  outputs = {}
  for name in window_step.OUTPUTS:
    artifact = standard_artifacts.String()
    folder = tmp_path / "root" / "spans" / run / "SpanWindow" / "salt" / name
    folder.mkdir(parents=True)
    artifact.uri = str(folder / "value")  # a value artifact's URI is its file
    outputs[name] = [artifact]
  executor = window_step.SpanWindow.EXECUTOR_SPEC.executor_class()
  executor.Do({}, outputs, {"data_root": str(root), "serving_dir": str(serving),
                            "train_steps": "50", "window_spec": spec})
  values = {}
  for name, (artifact,) in outputs.items():
    with open(artifact.uri) as f:
      values[name] = f.read()
  return values


def test_the_step_passes_the_newest_window_and_the_served_baseline(tmp_path):
  spec, root = _spec(tmp_path)
  serving = tmp_path / "serving"
  (serving / "100").mkdir(parents=True)
  (serving / "100" / "saved_model.pb").write_bytes(b"x")
  values = _run_step(spec, root, serving, tmp_path)
  assert sorted(s["name"] for s in json.loads(values["input_config"])["splits"]) == [
      "eval_span2", "eval_span3", "train_span2", "train_span3"]
  assert json.loads(values["train_args"]) == {
      "numSteps": 50, "splits": ["train_span2", "train_span3"]}
  assert json.loads(values["example_splits"]) == ["eval_span2", "eval_span3"]
  assert values["served_version"] == "100" and len(values["training_key"]) == 16


def test_a_rerun_with_nothing_new_passes_the_same_values(tmp_path):
  spec, root = _spec(tmp_path)
  serving = tmp_path / "serving"
  (serving / "100").mkdir(parents=True)
  (serving / "100" / "saved_model.pb").write_bytes(b"x")
  _, first = window_step.resolve_window(spec, str(root), str(serving), "50")
  # That run pushed version 200, its training key beside it. The rerun's
  # baseline is still 100, not its own model: every value is the same, so
  # every later step's cache key is too.
  (serving / "200" / "assets.extra").mkdir(parents=True)
  (serving / "200" / "saved_model.pb").write_bytes(b"x")
  (serving / "200" / "assets.extra" / "trained_on.json").write_text(json.dumps(
      {"train_splits": ["train_span2", "train_span3"],
       "training_key": first["training_key"]}))
  _, again = window_step.resolve_window(spec, str(root), str(serving), "50")
  assert again == first
  # A new span moves the window, and with it the key; the served model,
  # version 200, is the baseline again.
  for split in ("train", "eval"):
    (root / "span-4" / split).mkdir(parents=True)
    (root / "span-4" / split / "part-0.tfrecord.gz").write_bytes(b"")
  inputs, moved = window_step.resolve_window(spec, str(root), str(serving), "50")
  assert inputs.window.describe() == "spans 3, 4"
  assert moved["training_key"] != first["training_key"] and moved["served_version"] == "200"


def test_the_step_passes_the_cache_epoch_retention_raised_for_its_window(tmp_path):
  spec, root = _spec(tmp_path)
  values = _run_step(spec, root, tmp_path / "serving", tmp_path)
  window = cache_epoch.window_digest(values["input_config"])
  assert values["cache_epoch"].startswith(f"{window}.0.0."), values
  # Retention deleted a cached step's output of this window, then of a run
  # whose window is unknown: the next run's epoch differs each time, so no
  # later step's cache key equals that of a run whose outputs are gone.
  folder = str(tmp_path / "root" / "spans")
  cache_epoch.bump(folder, {window, "0123456789ab"})
  assert _run_step(spec, root, tmp_path / "serving", tmp_path, "run2")[
      "cache_epoch"].startswith(f"{window}.0.1.")
  cache_epoch.bump(folder, {None})
  assert _run_step(spec, root, tmp_path / "serving", tmp_path, "run3")[
      "cache_epoch"].startswith(f"{window}.1.1.")


def test_a_second_pipeline_root_never_shares_the_first_ones_cache(tmp_path):
  """The backend's cache key holds no root (driver/cache.go@2.17.0 line 126)
  but does hold each input parameter's value: with the root's digest in the
  epoch, a run under another root is never handed the first root's outputs,
  which only the first root's retention sees and may have deleted."""
  spec, root = _spec(tmp_path)
  first = _run_step(spec, root, tmp_path / "serving", tmp_path)
  other = tmp_path / "elsewhere"
  other.mkdir()
  second = _run_step(spec, root, tmp_path / "serving", other)
  assert first["input_config"] == second["input_config"]
  assert first["cache_epoch"] != second["cache_epoch"], (first, second)
  assert first["cache_epoch"].rsplit(".", 1)[0] == second["cache_epoch"].rsplit(".", 1)[0]


def test_a_data_root_without_a_complete_span_is_one_line_naming_it(tmp_path):
  spec, root = _spec(tmp_path, spans=())
  (root / "span-1" / "train").mkdir(parents=True)  # no eval folder: incomplete
  (root / "span-1" / "train" / "part-0.tfrecord.gz").write_bytes(b"")
  with pytest.raises(declaration.DeclarationError) as e:
    window_step.resolve_window(spec, str(root), str(tmp_path / "s"), "50")
  message = str(e.value)
  assert "\n" not in message and str(root) in message and "found none" in message, message


def test_bad_train_steps_are_named(tmp_path):
  spec, root = _spec(tmp_path)
  with pytest.raises(ValueError, match="train_steps: expected an integer, found 'many'"):
    window_step.resolve_window(spec, str(root), str(tmp_path / "s"), "many")

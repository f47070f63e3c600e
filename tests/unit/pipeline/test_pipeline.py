"""Pipeline construction: what create_pipeline builds from a declaration."""

import dataclasses
import json
import os
import shutil

import pytest
from tfx import v1 as tfx

from components.pusher.pusher import Executor as PusherExecutor
from dataset import declaration
from kubeflow.steps.span_window import SpanWindow
from pipeline import cache_keys
from pipeline.config import ConfigError, PipelineConfig, TrainingConfig
from pipeline.inputs import resolve_inputs
from tests.conftest import (
  DIGITS_SCHEMA,
  DIGITS_YAML,
  build_pipeline,
  digit_rows,
  digits_dataset,
)


def _config(decl, **kwargs):
  return PipelineConfig(pipeline_name="t", pipeline_root="/tmp/t/root",
                        serving_dir="/tmp/t/serving", declaration=decl, **kwargs)


def _by_id(p):
  return {c.id: c for c in p.components}


def test_curated_schema_is_imported_and_used_by_statistics():
  p = build_pipeline(_config(declaration.load(DIGITS_YAML)))
  nodes = _by_id(p)
  assert set(nodes) == {
      "ImportExampleGen", "StatisticsGen", "CuratedSchema", "ExampleValidator",
      "AnomaliesGate", "Transform", "Trainer", "BaselineModel",
      "Evaluator", "ServingCheck", "Pusher", "ImageCheck"}
  with open(DIGITS_SCHEMA) as f:
    assert nodes["CuratedSchema"].exec_properties["schema_text"] == f.read()
  assert "schema" in nodes["StatisticsGen"].inputs


def test_without_curated_schema_schemagen_infers_shapes(tmp_path):
  decl = declaration.load(digits_dataset(tmp_path, digit_rows(4), schema=False))
  nodes = _by_id(build_pipeline(_config(decl)))
  assert "SchemaGen" in nodes and "CuratedSchema" not in nodes
  assert nodes["SchemaGen"].exec_properties["infer_feature_shape"] in (True, 1)


def test_hash_split_and_pre_split_inputs(tmp_path):
  hashed = declaration.load(digits_dataset(tmp_path / "a", digit_rows(4)))
  gen = _by_id(build_pipeline(_config(hashed)))["ImportExampleGen"]
  output = json.loads(gen.exec_properties["output_config"])
  assert {s["name"]: s["hash_buckets"] for s in output["split_config"]["splits"]} \
      == {"train": 3, "eval": 1}
  split = declaration.load(digits_dataset(tmp_path / "b", digit_rows(4),
                                          pattern_layout=False))
  gen = _by_id(build_pipeline(_config(split)))["ImportExampleGen"]
  inputs = json.loads(gen.exec_properties["input_config"])
  assert {s["name"]: s["pattern"] for s in inputs["splits"]} == {
      "train": "train/*.tfrecord.gz", "eval": "eval/*.tfrecord.gz"}


def test_transform_waits_for_the_gate_that_reads_the_anomalies_and_the_image_check():
  nodes = _by_id(build_pipeline(_config(declaration.load(DIGITS_YAML))))
  assert nodes["AnomaliesGate"] in nodes["Transform"].upstream_nodes
  assert nodes["ImageCheck"] in nodes["AnomaliesGate"].upstream_nodes
  assert "image_check" in nodes["AnomaliesGate"].inputs


def test_evaluator_has_value_and_change_thresholds():
  config = _config(declaration.load(DIGITS_YAML), threshold=0.93,
                   max_change=0.02)
  evaluator = _by_id(build_pipeline(config))["Evaluator"]
  eval_config = json.loads(evaluator.exec_properties["eval_config"])
  metric = [m for m in eval_config["metrics_specs"][0]["metrics"]
            if m["class_name"] == "SparseCategoricalAccuracy"][0]
  # On the overall slice only: declared slices are judged by the executor.
  [per_slice] = metric["per_slice_thresholds"]
  assert per_slice["slicing_specs"] == [{}]
  assert per_slice["threshold"]["value_threshold"]["lower_bound"] == 0.93
  change = per_slice["threshold"]["change_threshold"]
  assert change["direction"] == "HIGHER_IS_BETTER"
  assert change["absolute"] == pytest.approx(-0.02)
  assert "baseline_model" in evaluator.inputs
  # Per class from one confusion matrix (the report's table, the run page's
  # matrix), not a slice per class.
  assert eval_config["slicing_specs"] == [{}], eval_config["slicing_specs"]
  plots = [m["class_name"] for m in eval_config["metrics_specs"][0]["metrics"]]
  assert "MultiClassConfusionMatrixPlot" in plots, plots


def _eval_config(tmp_path, label, evaluation=None, **kwargs):
  from tests.conftest import digits_raw, write_declaration
  raw = dict(digits_raw(), label=label, evaluation=evaluation or {})
  raw["schema"] = DIGITS_SCHEMA
  raw["data"]["root"] = str(tmp_path)
  decl = declaration.load(write_declaration(tmp_path, raw))
  evaluator = _by_id(build_pipeline(_config(decl, **kwargs)))["Evaluator"]
  return json.loads(evaluator.exec_properties["eval_config"])


def _thresholded(eval_config):
  return [(spec, m) for spec in eval_config["metrics_specs"] for m in spec["metrics"]
          if m.get("per_slice_thresholds")]


def test_two_classes_add_auc_on_class_one_and_can_bless_on_it(tmp_path):
  config = _eval_config(tmp_path, {"name": "label", "classes": ["no", "yes"]},
                        {"metric": "auc", "threshold": 0.8})
  [(spec, metric)] = _thresholded(config)
  assert metric["class_name"] == "AUC"
  assert spec["binarize"] == {"class_ids": {"values": [1]}}
  threshold = metric["per_slice_thresholds"][0]["threshold"]
  assert threshold["value_threshold"]["lower_bound"] == 0.8
  assert config["model_specs"][0]["prediction_key"] == "probabilities"
  ten = _eval_config(tmp_path, {"name": "label", "num_classes": 10})
  assert "AUC" not in json.dumps(ten)


def test_regression_blesses_below_an_upper_bound_and_not_much_worse(tmp_path):
  config = _eval_config(tmp_path, {"name": "label", "kind": "regression"},
                        {"metric": "mae", "threshold": 2.5}, max_change=0.2)
  [(_, metric)] = _thresholded(config)
  assert metric["class_name"] == "MeanAbsoluteError"
  threshold = metric["per_slice_thresholds"][0]["threshold"]
  assert threshold["value_threshold"] == {"upper_bound": 2.5}
  assert threshold["change_threshold"]["direction"] == "LOWER_IS_BETTER"
  assert threshold["change_threshold"]["absolute"] == pytest.approx(0.2)
  names = {m["class_name"] for spec in config["metrics_specs"] for m in spec["metrics"]}
  assert {"RootMeanSquaredError", "MeanAbsoluteError"} <= names
  assert config["model_specs"][0]["prediction_key"] == "value"
  assert config["slicing_specs"] == [{}], "no per-class slices for a float label"


def test_the_pusher_pushes_what_was_blessed_and_checked_into_the_serving_dir():
  """The Pusher waits on both verdicts, the Evaluator's blessing and the
  serving check's, and pushes the Trainer's model into the serving dir
  with the executor that never copies a model twice (its behaviour:
  tests/unit/test_serving.py and the e2e reruns)."""
  nodes = _by_id(build_pipeline(_config(declaration.load(DIGITS_YAML))))
  pusher = nodes["Pusher"]
  assert pusher.executor_spec.executor_class is PusherExecutor
  assert pusher.exec_properties["serving_dir"] == "/tmp/t/serving"
  inputs = {key: channel.producer_component_id for key, channel in pusher.inputs.items()}
  assert inputs["model"] == "Trainer" and inputs["model_blessing"] == "Evaluator", inputs
  assert inputs["infra_blessing"] == "ServingCheck", inputs


def test_training_settings_reach_the_trainer_and_not_transform():
  """Each cache key covers what changes that component's output: a training
  setting re-runs the Trainer, and leaves Transform cached."""
  base = _config(declaration.load(DIGITS_YAML))
  changed = dataclasses.replace(base, training=TrainingConfig(train_steps=123, batch_size=7))
  nodes, other = (_by_id(build_pipeline(c)) for c in (base, changed))
  custom = json.loads(other["Trainer"].exec_properties["custom_config"])
  assert custom["training"]["train_steps"] == 123 and custom["training"]["batch_size"] == 7
  assert custom["declaration"]["name"] == "digits"
  assert nodes["Trainer"].exec_properties["custom_config"] != \
      other["Trainer"].exec_properties["custom_config"]
  transform = json.loads(other["Transform"].exec_properties["custom_config"])
  assert set(transform) == {"declaration", "code", "analyzer_cache"}
  assert nodes["Transform"].exec_properties["custom_config"] == \
      other["Transform"].exec_properties["custom_config"]


def test_workers_reach_the_trainer_only_when_there_are_several():
  """One worker leaves the Trainer's configuration (its cache key) as it
  was; two add the job the Trainer launches."""
  base = _config(declaration.load(DIGITS_YAML))
  two = dataclasses.replace(base, train_workers=2, train_engine="trainjob")
  one, other = (json.loads(_by_id(build_pipeline(c))["Trainer"].exec_properties["custom_config"])
                for c in (base, two))
  assert "workers" not in one
  assert other["workers"] == {"count": 2, "engine": "trainjob"}
  assert {k: v for k, v in other.items() if k != "workers"} == one


def _edited(tmp_path, paths, target: str):
  """Copies of `paths` (files and folders) with an edit to the file `target`."""
  copies = []
  for i, path in enumerate(paths):
    copy = tmp_path / str(i) / os.path.basename(path)
    if os.path.isdir(path):
      shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
    else:
      copy.parent.mkdir(parents=True)
      shutil.copy(path, copy)
    copies.append(str(copy))
  (edited,) = [p for p in tmp_path.rglob(target)]
  edited.write_text(edited.read_text() + "\n# edit\n")
  return copies


def test_an_edit_under_trainer_changes_only_the_trainers_code_key(tmp_path):
  trainer_paths, transform_paths = cache_keys.trainer_code(), cache_keys.transform_code()
  assert cache_keys.code_fingerprint(trainer_paths) == cache_keys.code_fingerprint(trainer_paths)
  edited = _edited(tmp_path, trainer_paths, "model.py")
  assert cache_keys.code_fingerprint(edited) != cache_keys.code_fingerprint(trainer_paths)
  assert not set(transform_paths) & {p for p in trainer_paths if "trainer" in p}


def test_code_in_a_subfolder_of_the_trainers_changes_its_code_key(tmp_path):
  """Code moved into a subfolder of trainer/ still re-runs the Trainer when
  it changes: the fingerprint recurses (it read the top folder's files only)."""
  trainer_paths = cache_keys.trainer_code()
  copies = _edited(tmp_path, trainer_paths, "model.py")
  (folder,) = [p for p in copies if os.path.basename(p) == "trainer"]
  os.makedirs(os.path.join(folder, "layers"))
  module = os.path.join(folder, "layers", "blocks.py")
  with open(module, "w") as f:
    f.write("WIDTH = 64\n")
  before = cache_keys.code_fingerprint(copies)
  with open(module, "w") as f:
    f.write("WIDTH = 128\n")
  assert cache_keys.code_fingerprint(copies) != before, "an edit in trainer/layers/ kept the key"
  os.rename(module, os.path.join(folder, "blocks.py"))
  assert cache_keys.code_fingerprint(copies) != before, "a module moved up kept the key"


def test_an_edit_to_the_preprocessing_code_changes_only_transforms_code_key(tmp_path):
  trainer_paths, transform_paths = cache_keys.trainer_code(), cache_keys.transform_code()
  edited = _edited(tmp_path, transform_paths, "preprocessing.py")
  assert cache_keys.code_fingerprint(edited) != cache_keys.code_fingerprint(transform_paths)
  assert not any(p.endswith("preprocessing.py") or p.endswith(os.sep + "components")
                 for p in trainer_paths)


def test_by_default_transform_writes_only_its_graph_and_the_trainer_applies_it():
  nodes = _by_id(build_pipeline(_config(declaration.load(DIGITS_YAML))))
  assert "transformed_examples" not in nodes["Transform"].outputs
  assert (nodes["Trainer"].inputs["examples"]
          is nodes["ImportExampleGen"].outputs["examples"])
  custom = json.loads(nodes["Trainer"].exec_properties["custom_config"])
  assert custom["materialized"] is False


def test_materialized_transform_feeds_the_trainer_its_examples():
  config = _config(declaration.load(DIGITS_YAML), materialize=True)
  nodes = _by_id(build_pipeline(config))
  assert (nodes["Trainer"].inputs["examples"]
          is nodes["Transform"].outputs["transformed_examples"])
  assert json.loads(nodes["Trainer"].exec_properties["custom_config"])["materialized"]


def test_train_flags_set_training_config_fields():
  import local_runner
  from commands.run.flags import training_config
  args = local_runner.parse_args(["--train", "loop=custom", "--train", "batch_size=128",
                                  "--train", "flip_left_right=true",
                                  "--train", "max_crop_fraction=0.1"])
  assert args.train == [("loop", "custom"), ("batch_size", 128), ("flip_left_right", True),
                        ("max_crop_fraction", 0.1)], "typed once, at the command line"
  config = training_config(args.train)
  assert (config.loop, config.batch_size, config.flip_left_right,
          config.max_crop_fraction) == ("custom", 128, True, 0.1)


@pytest.mark.parametrize("argv, steps, epochs", [
    ([], 800, 8),
    (["--train", "train_steps=100"], 100, 8),  # was silently 800
    (["--train-steps", "5"], 5, 5),  # fewer steps than epochs: one per epoch
    (["--train", "train_steps=100", "--train-steps", "50"], 50, 8),  # the later wins
    (["--train-steps", "50", "--train", "train_steps=100"], 100, 8),
    (["--train-steps", "40", "--train", "epochs=4"], 40, 4),
])
def test_train_steps_is_shorthand_for_the_train_setting(argv, steps, epochs):
  import local_runner
  from commands.run.flags import training_config
  args = local_runner.parse_args(argv)
  config = training_config(args.train)
  assert (config.train_steps, config.epochs) == (steps, epochs), args.train


@pytest.mark.parametrize("setting, message", [
    ("loops=custom", "FIELD one of train_steps"), ("batch_size", "expected FIELD=VALUE"),
    ("batch_size=big", "expected a int value, found 'big'"),
    ("flip_left_right=maybe", "expected a bool value"),
])
def test_bad_train_flags_name_the_setting(setting, message, capsys):
  import local_runner
  with pytest.raises(SystemExit) as stopped:
    local_runner.parse_args(["--train", setting])
  err = capsys.readouterr().err
  assert stopped.value.code == 2 and f"argument --train: {setting!r}: " in err, err
  assert message in err, err


def test_a_train_value_the_config_refuses_is_named():
  from commands.run.flags import training_config
  with pytest.raises(ConfigError, match="config field 'loop': expected one of"):
    training_config([("loop", "tape")])


@pytest.mark.parametrize("kwargs,field", [
    ({"threshold": 1.5}, "threshold"),
    ({"max_change": -0.1}, "max_change"),
    ({"pipeline_name": "a b"}, "pipeline_name"),
    ({"train_workers": 0}, r"train_workers \(--train-workers\)"),
    ({"train_workers": 2, "train_engine": "slurm"}, r"train_engine \(--train-engine\)"),
    ({"train_engine": "tfjob"}, r"train_engine \(--train-engine\)"),
    ({"train_workers": 2}, r"train_engine \(--train-engine\)"),
])
def test_invalid_pipeline_config_names_the_field(kwargs, field):
  base = dict(pipeline_name="t", pipeline_root="r", serving_dir="s",
              declaration=declaration.load(DIGITS_YAML))
  base.update(kwargs)
  with pytest.raises(ConfigError, match=f"config field '{field}': expected"):
    PipelineConfig(**base)


@pytest.mark.parametrize("kwargs,field", [
    ({"train_steps": 0}, "train_steps"), ({"batch_size": 2.5}, "batch_size"),
    ({"learning_rate": 3}, "learning_rate"), ({"epochs": 10, "train_steps": 5}, "epochs"),
])
def test_invalid_training_config_names_the_field(kwargs, field):
  with pytest.raises(ConfigError, match=f"config field '{field}': expected"):
    TrainingConfig(**kwargs)


def test_one_definition_builds_the_same_dag_for_both_runners():
  """The local runner and the Kubeflow compiler get the same components in
  the same order with the same edges; a compiled pipeline differs only in
  that what a run may set is a runtime parameter defaulting to the local
  value. Neither carries a metadata store: the runner chooses it."""
  from tfx.orchestration.data_types import RuntimeParameter

  from pipeline.inputs import unresolved_inputs
  from pipeline.pipeline import create_pipeline
  local_config = _config(declaration.load(DIGITS_YAML))
  local = build_pipeline(local_config)
  compiled_config = dataclasses.replace(local_config, runtime_parameters=True)
  compiled = create_pipeline(compiled_config, unresolved_inputs(compiled_config),
                             window_step=SpanWindow)
  assert isinstance(local, tfx.dsl.Pipeline) and isinstance(compiled, tfx.dsl.Pipeline)
  assert [c.id for c in local.components] == [c.id for c in compiled.components]

  def edges(p):
    return {(u.id, c.id) for c in p.components for u in c.upstream_nodes}
  assert edges(local) == edges(compiled) and edges(local)
  assert local.metadata_connection_config is None
  assert compiled.metadata_connection_config is None
  differ = {}
  for a, b in zip(local.components, compiled.components):
    assert set(a.exec_properties) == set(b.exec_properties), a.id
    for key, value in b.exec_properties.items():
      if value != a.exec_properties[key]:
        differ[(a.id, key)] = value
  assert differ and all(isinstance(v, RuntimeParameter) for v in differ.values()), differ


def test_the_served_version_not_trained_by_this_run_is_the_baseline(tmp_path):
  serving = tmp_path / "serving"
  for version in ("100", "200"):
    (serving / version).mkdir(parents=True)
    (serving / version / "saved_model.pb").write_bytes(b"x")
  config = _config(declaration.load(DIGITS_YAML))
  config = PipelineConfig(**{**config.__dict__, "serving_dir": str(serving)})
  inputs = resolve_inputs(config)
  nodes = _by_id(build_pipeline(config))
  # The served version is the baseline step's cache key: a new push re-runs it.
  assert inputs.served_version == "200"
  assert nodes["BaselineModel"].exec_properties["served_version"] == "200"
  assert nodes["BaselineModel"].exec_properties["training_key"] == inputs.training_key
  assert nodes["Evaluator"].inputs["baseline_model"].producer_component_id == \
      "BaselineModel"

  # Version 200 is this very run's earlier model (its training key is this
  # run's): a rerun meets the baseline that run met, 100, not its own model.
  assert len(inputs.training_key) == 16, inputs.training_key
  (serving / "200" / "assets.extra").mkdir()
  (serving / "200" / "assets.extra" / "trained_on.json").write_text(
      json.dumps({"train_splits": ["train"], "training_key": inputs.training_key}))
  assert resolve_inputs(config).served_version == "100"
  # A changed setting is a new key: the served model is the baseline again.
  changed = PipelineConfig(**{**config.__dict__, "training": TrainingConfig(
      learning_rate=0.003)})
  assert resolve_inputs(changed).served_version == "200"


def test_components_get_the_dataset_contract_without_paths():
  nodes = _by_id(build_pipeline(_config(declaration.load(DIGITS_YAML))))
  custom = json.loads(nodes["Trainer"].exec_properties["custom_config"])
  assert custom["declaration"]["path"] == "" and custom["declaration"]["data"] == {"root": ""}
  decl = declaration.Declaration.from_dict(custom["declaration"])
  assert decl.features == declaration.load(DIGITS_YAML).features


def test_without_spans_transform_keeps_no_cache_and_the_evaluator_only_its_metrics():
  """Data without spans has no analysis to share across runs; the Evaluator
  computes the judged metrics, not the model's compiled ones again."""
  nodes = _by_id(build_pipeline(_config(declaration.load(DIGITS_YAML))))
  assert "updated_analyzer_cache" not in nodes["Transform"].outputs, \
      sorted(nodes["Transform"].outputs)
  eval_config = json.loads(nodes["Evaluator"].exec_properties["eval_config"])
  assert eval_config["options"]["include_default_metrics"] is False, eval_config["options"]

"""Compiling for Kubeflow Pipelines v2, checked with the real kfp SDK."""

import json
import os
import socket
import sys

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from commands.kubeflow.cli import main as kubeflow
from dataset import declaration
from kubeflow.compile import report_step, train_job
from kubeflow.compile.compiler import executor_labels
from kubeflow.compile.spec import tasks as spec_tasks
from pipeline.config import PipelineConfig
from tests.conftest import (
  DIGITS_SCHEMA,
  DIGITS_YAML,
  REPO,
  build_pipeline,
  digits_raw,
  span_declaration,
  write_declaration,
)

IMAGE = "registry.example.com/tfrecord-pipeline:1.0"
RUNTIME_PARAMETERS = {"data_root", "train_args", "serving_dir", "scheduled_by", "input_config",
                      "splits_config", "eval_args", "example_splits", "served_version",
                      "training_key"}


def compile_digits(out, *extra, data_root="gs://bkt/data/digits"):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://bkt/pipelines",
                   "--output-dir", str(out), "--skip-data-check", *extra]
                  + (["--data-root", data_root] if data_root else []))
  assert code == 0
  with open(out / "pipeline.yaml") as f:
    spec = next(yaml.safe_load_all(f))  # then the platform config, if any
  with open(out / "pipeline_job.json") as f:
    job = json.load(f)
  return spec, job


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
  out = tmp_path_factory.mktemp("kfp")
  spec, job = compile_digits(out, "--resource", "Trainer:cpu=4,memory=16,gpus=1",
                             "--resource", "ImportExampleGen:cpu=2,memory=8",
                             "--train-steps", "300")
  return {"out": out, "spec": spec, "job": job}


def test_compile_prints_the_two_files(tmp_path, capsys):
  compile_digits(tmp_path)
  lines = capsys.readouterr().out.strip().splitlines()
  assert lines[-2:] == [f"pipeline spec: {tmp_path / 'pipeline.yaml'}",
                        f"pipeline job: {tmp_path / 'pipeline_job.json'}"]


def test_spec_and_job_parse_strictly_into_kfp_protos(compiled):
  spec = json_format.ParseDict(compiled["spec"], pipeline_spec_pb2.PipelineSpec())
  assert spec.pipeline_info.name == "digits"
  job = json_format.ParseDict(compiled["job"], pipeline_spec_pb2.PipelineJob())
  assert job.runtime_config.gcs_output_directory == "gs://bkt/pipelines"
  assert json_format.MessageToDict(job.pipeline_spec) == compiled["spec"]


def test_spec_loads_as_a_kfp_component_and_nests_in_a_kfp_pipeline(compiled, tmp_path):
  from kfp import compiler, components, dsl
  digits = components.load_component_from_file(str(compiled["out"] / "pipeline.yaml"))
  assert set(digits.component_spec.inputs) == RUNTIME_PARAMETERS

  @dsl.pipeline(name="nightly")
  def nightly(data_root: str = "gs://bkt/data/new"):
    digits(data_root=data_root, train_args='{"num_steps": 5}',
           serving_dir="gs://bkt/s")

  package = tmp_path / "nightly.yaml"
  compiler.Compiler().compile(nightly, str(package))
  with open(package) as f:
    outer = yaml.safe_load(f)
  assert "digits" in outer["components"]["comp-digits"]["dag"]["tasks"] or \
      any("Trainer" in c.get("dag", {}).get("tasks", {})
          for c in outer["components"].values())


def test_spec_holds_every_local_component(compiled):
  local = build_pipeline(PipelineConfig(
      pipeline_name="digits", pipeline_root="/r", serving_dir="/s",
      declaration=declaration.load(DIGITS_YAML)))
  tasks = compiled["spec"]["root"]["dag"]["tasks"]
  assert set(tasks) == {c.id for c in local.components} | {"RunReport"}
  # The report step reads every step's outputs, so it runs last, and is never
  # served from the cache (its page would be an earlier run's).
  report = tasks["RunReport"]
  assert set(report["dependentTasks"]) == {c.id for c in local.components}
  assert "cachingOptions" not in report
  read = {a["taskOutputArtifact"]["producerTask"]
          for a in report["inputs"]["artifacts"].values()}
  assert read == {c.id for c in local.components if c.outputs}, read
  assert compiled["spec"]["components"]["RunReport"]["outputDefinitions"]["artifacts"][
      "report"]["artifactType"]["schemaTitle"] == "system.HTML"


def test_runtime_parameters_have_the_compiled_defaults(compiled):
  params = compiled["spec"]["root"]["inputDefinitions"]["parameters"]
  assert set(params) == RUNTIME_PARAMETERS
  assert params["data_root"]["defaultValue"] == "gs://bkt/data/digits"
  assert json.loads(params["train_args"]["defaultValue"]) == {
      "numSteps": 300, "splits": ["train"]}
  assert params["serving_dir"]["defaultValue"] == "gs://bkt/pipelines/digits/serving"
  assert compiled["job"]["runtimeConfig"]["parameterValues"]["data_root"] == \
      "gs://bkt/data/digits"
  tasks = compiled["spec"]["root"]["dag"]["tasks"]
  assert tasks["ImportExampleGen"]["inputs"]["parameters"]["input_base"] == {
      "componentInputParameter": "data_root"}
  # The serving dir is one string, the same parameter for every step that uses it.
  for node in ("Pusher", "BaselineModel"):
    assert tasks[node]["inputs"]["parameters"]["serving_dir"] == {
        "componentInputParameter": "serving_dir"}, node


def test_every_step_runs_in_the_image_with_the_project_entrypoint(compiled):
  for label, executor in compiled["spec"]["deploymentSpec"]["executors"].items():
    assert executor["container"]["image"] == IMAGE, label
    entry = ("kubeflow.steps.report" if label == "RunReport_executor"
             else "kubeflow.steps.entrypoint")
    assert executor["container"]["command"] == ["python", "-m", entry], label


def test_resources_reach_the_containers_importexamplegen_included(compiled):
  executors = compiled["spec"]["deploymentSpec"]["executors"]
  assert executors["Trainer_executor"]["container"]["resources"] == {
      "cpuLimit": 4.0, "cpuRequest": 4.0, "memoryLimit": 16.0, "memoryRequest": 16.0,
      "accelerator": {"type": "nvidia.com/gpu", "count": "1"}}
  assert executors["ImportExampleGen_executor"]["container"]["resources"]["cpuLimit"] == 2.0
  assert "resources" not in executors["Transform_executor"]["container"]


def test_importexamplegen_and_baseline_are_never_served_from_kubeflows_cache(compiled):
  tasks = compiled["spec"]["root"]["dag"]["tasks"]
  assert "cachingOptions" not in tasks["ImportExampleGen"]
  assert "cachingOptions" not in tasks["BaselineModel"]
  assert tasks["Trainer"]["cachingOptions"] == {"enableCache": True}


def test_no_path_of_the_compiling_machine_in_either_file(compiled):
  machine_paths = {REPO, os.path.dirname(REPO), sys.prefix, os.getcwd(),
                   os.path.expanduser("~"), str(compiled["out"]),
                   os.path.realpath(str(compiled["out"])), socket.gethostname()}
  for name in ("pipeline.yaml", "pipeline_job.json"):
    text = (compiled["out"] / name).read_text()
    for path in machine_paths:
      assert path not in text, f"{name} holds {path!r}"
    assert "/tmp/" not in text and ".venv" not in text and "module_file" not in text


def test_curated_schema_and_declaration_travel_inside_the_spec(compiled):
  tasks = compiled["spec"]["root"]["dag"]["tasks"]
  schema = tasks["CuratedSchema"]["inputs"]["parameters"]["schema_text"]
  assert 'name: "ink"' in schema["runtimeValue"]["constant"]
  custom = json.loads(tasks["Trainer"]["inputs"]["parameters"]["custom_config"]
                      ["runtimeValue"]["constant"])
  assert [f["name"] for f in custom["declaration"]["features"]] == [
      "image", "ink", "brightness", "shape", "row_ink"]


def _inputs(task):
  return {name: spec["taskOutputArtifact"]["producerTask"]
          for name, spec in task["inputs"].get("artifacts", {}).items()}


def test_training_settings_and_the_transform_choice_reach_the_compiled_trainer(
    compiled, tmp_path):
  tasks = compiled["spec"]["root"]["dag"]["tasks"]
  # The default: Transform writes only its graph; the Trainer reads ExampleGen's.
  assert _inputs(tasks["Trainer"])["examples"] == "ImportExampleGen"
  spec, _ = compile_digits(tmp_path, "--train", "loop=custom", "--train",
                           "flip_left_right=true", "--materialize")
  trainer = spec["root"]["dag"]["tasks"]["Trainer"]
  assert _inputs(trainer)["examples"] == "Transform"
  custom = json.loads(trainer["inputs"]["parameters"]["custom_config"]
                      ["runtimeValue"]["constant"])
  assert custom["training"]["loop"] == "custom"
  assert custom["training"]["flip_left_right"] is True
  assert custom["materialized"] is True


@pytest.mark.parametrize("flags,message", [
    (["--train", "loop=tape"], "config field 'loop': expected one of"),
    (["--train", "batchsize=8"], "argument --train: 'batchsize=8': expected FIELD=VALUE"),
    (["--pipeline-name", "Digits_v2"], "pipeline name: expected lower-case"),
    (["--resource", "Trainr:cpu=2"], "config field 'resources': expected a component id"),
    (["--resource", "Trainer:cpus=2"], "--resource 'Trainer:cpus=2': expected keys"),
    (["--resource", "Trainer:gpus=-1"], "config field 'resources.gpus'"),
    (["--keep-runs", "0"], "--keep-runs: expected a whole number >= 1, found '0'"),
    (["--train-workers", "0"], "config field 'train_workers (--train-workers)': expected "
                               "an integer >= 1"),
    (["--train-workers", "2", "--train-engine", "slurm"], "--train-engine: invalid choice: "
                                                          "'slurm'"),
    (["--train-engine", "tfjob"], "config field 'train_engine (--train-engine)': expected "
                                  "no engine with one worker"),
    (["--train-workers", "2"], "config field 'train_engine (--train-engine)': expected an "
                               "engine for 2 workers"),
    (["--train-workers", "2", "--train-engine", "local"], "--train-engine: invalid choice"),
    (["--train-timeout", "0"], "--train-timeout: expected a number of seconds >= 1"),
    (["--train-heartbeat-timeout", "5"], "--train-heartbeat-timeout: expected a number of "
                                         "seconds >= 30"),
    (["--train-workers", "2", "--train-engine", "trainjob", "--train-heartbeat-timeout", "120"],
     "--train-heartbeat-timeout: only for --train-workers N (more than 1) on --train-engine "
     "tfjob, found 2 worker(s) on --train-engine trainjob"),
])
def test_bad_compile_flags_give_one_clear_line(tmp_path, capsys, flags, message):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                   "--data-root", "gs://b/d",
                   "--output-dir", str(tmp_path / "out"), "--skip-data-check", *flags])
  err = capsys.readouterr().err
  assert code == 2 and message in err, err
  assert "Traceback" not in err
  assert not (tmp_path / "out").exists()


def test_data_check_reads_the_records_unless_skipped(tmp_path, capsys):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                   "--data-root", str(tmp_path / "nothing"),
                   "--output-dir", str(tmp_path / "out")])
  err = capsys.readouterr().err
  assert code == 2 and "expected TFRecord files matching" in err, err
  assert not (tmp_path / "out").exists()


def test_beam_args_reach_every_data_components_container(tmp_path, capsys):
  spec, _ = compile_digits(tmp_path, "--beam-args",
                           "--runner=DataflowRunner --project=p --region=r")
  executors = spec["deploymentSpec"]["executors"]
  for label in ("ImportExampleGen_executor", "StatisticsGen_executor",
                "Transform_executor", "Evaluator_executor"):
    args = executors[label]["container"]["args"]
    # The workers run the step's image: TFX builds no sdist of itself.
    image = executors[label]["container"]["image"]
    assert args[-4:] == ["--runner=DataflowRunner", "--project=p", "--region=r",
                         f"--sdk_container_image={image}"], (label, args[-4:])
  assert "skipped: the check of the declaration against the records under " \
      "gs://bkt/data/digits (--skip-data-check)" in capsys.readouterr().err


def test_both_runners_take_the_same_pipeline_flags():
  import argparse

  import local_runner
  from commands.kubeflow.cli import parser
  from commands.run.flags import add_pipeline_flags
  shared = argparse.ArgumentParser()
  add_pipeline_flags(shared, default_dataset=DIGITS_YAML)
  wanted = {o for a in shared._actions for o in a.option_strings} - {"-h", "--help"}
  compile_parser = parser()._subparsers._group_actions[0].choices["compile"]
  kubeflow_flags = {o for a in compile_parser._actions for o in a.option_strings}
  assert wanted <= kubeflow_flags
  args = local_runner.parse_args(["--max-accuracy-drop", "0.05",
                                  "--beam-args=--direct_num_workers=2", "--train-steps", "5"])
  assert (args.max_change, args.beam_args, args.train) == (
      0.05, "--direct_num_workers=2", [("train_steps", 5)])


def test_a_window_of_spans_is_resolved_by_the_pipelines_first_step(tmp_path):
  path, root = span_declaration(tmp_path)
  # Compiling lists nothing: SpanWindow lists the spans when each run starts.
  spec, job = compile_digits(tmp_path / "out", "--dataset", str(path),
                             "--pipeline-name", "spans", data_root=str(root))
  params = spec["root"]["inputDefinitions"]["parameters"]
  assert set(params) == {"data_root", "serving_dir", "train_steps", "scheduled_by"}
  assert params["train_steps"]["defaultValue"] == "800"  # the default steps
  tasks = spec["root"]["dag"]["tasks"]
  window = tasks["SpanWindow"]
  assert "cachingOptions" not in window, "SpanWindow must list the spans on every run"
  for name in ("data_root", "serving_dir", "train_steps"):
    assert window["inputs"]["parameters"][name] == {"componentInputParameter": name}
  declared = spec["components"]["SpanWindow"]["outputDefinitions"]["parameters"]
  assert set(declared) == {"input_config", "splits_config", "train_args", "eval_args",
                           "example_splits", "served_version", "training_key",
                           "drift_baseline", "cache_epoch"}
  # Each consumer reads the window's values as output parameters of the task
  # that exists (TFX's compiler names "SpanWindow_task"), and waits for it.
  for node, name in (("ImportExampleGen", "input_config"), ("Transform", "splits_config"),
                     ("Trainer", "train_args"), ("Trainer", "eval_args"),
                     ("Evaluator", "example_splits"), ("BaselineModel", "served_version"),
                     ("BaselineModel", "training_key"), ("DriftGate", "drift_baseline")):
    assert tasks[node]["inputs"]["parameters"][name] == {"taskOutputParameter": {
        "producerTask": "SpanWindow", "outputParameterKey": name}}, (node, name)
    assert "SpanWindow" in tasks[node]["dependentTasks"], node
  # Spans never change, so ImportExampleGen may come from Kubeflow's cache;
  # so may BaselineModel, which copies the version SpanWindow names.
  assert tasks["ImportExampleGen"]["cachingOptions"] == {"enableCache": True}
  assert tasks["BaselineModel"]["cachingOptions"] == {"enableCache": True}
  # Every cached step that reads no artifact takes the window's cache epoch,
  # which retention raises before it deletes (store/retention/cache_epoch.py); the
  # others are keyed on those steps' artifacts.
  roots = {n for n, t in tasks.items() if t.get("cachingOptions", {}).get("enableCache")
           and not t.get("inputs", {}).get("artifacts")}
  assert roots >= {"ImportExampleGen", "BaselineModel"}, roots
  for node, task in tasks.items():
    given = task.get("inputs", {}).get("parameters", {}).get("cache_epoch")
    assert (given == {"taskOutputParameter": {
        "producerTask": "SpanWindow", "outputParameterKey": "cache_epoch"}}) == (node in roots), node
  # Warm start: the Trainer takes BaselineModel's model as its base model.
  assert tasks["Trainer"]["inputs"]["artifacts"]["base_model"] == {
      "taskOutputArtifact": {"producerTask": "BaselineModel", "outputArtifactKey": "model"}}
  assert "BaselineModel" in tasks["Trainer"]["dependentTasks"]
  # Transform's analyzer cache lives under the pipeline root, shared by runs.
  constant = tasks["Transform"]["inputs"]["parameters"]["custom_config"]["runtimeValue"][
      "constant"]
  transform_config = constant if isinstance(constant, dict) else json.loads(constant)
  assert transform_config["analyzer_cache"] == "gs://bkt/pipelines/analyzer_cache/spans"
  # The data's patterns travel in the spec; no file beside it.
  spec_json = json.loads(window["inputs"]["parameters"]["window_spec"]["runtimeValue"][
      "constant"])
  assert spec_json["data"]["window"] == 2
  assert spec_json["data"]["splits"]["train"] == "span-{SPAN}/train/*.tfrecord.gz"
  assert sorted(os.listdir(tmp_path / "out")) == ["pipeline.yaml", "pipeline_job.json"]
  # The wiring is valid IR, and kfp loads the spec and nests it.
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
  json_format.ParseDict(job, pipeline_spec_pb2.PipelineJob())
  from kfp import compiler, components, dsl
  spans = components.load_component_from_file(str(tmp_path / "out" / "pipeline.yaml"))
  assert set(spans.component_spec.inputs) == {"data_root", "serving_dir", "train_steps", "scheduled_by"}

  @dsl.pipeline(name="nightly")
  def nightly(data_root: str = "gs://bkt/data/new"):
    spans(data_root=data_root, train_steps="5",
          serving_dir="gs://bkt/s")

  compiler.Compiler().compile(nightly, str(tmp_path / "nightly.yaml"))
  assert (tmp_path / "nightly.yaml").stat().st_size > 0


def test_compile_skipping_the_data_check_opens_nothing(tmp_path, monkeypatch):
  """A span declaration on an S3 endpoint nobody serves: compiling neither
  lists its spans nor loads the S3 file system. Whether an earlier test in
  this process loaded it does not matter: compile is watched asking for it."""
  from runtime import startup, storage
  asked = []
  monkeypatch.setattr(storage, "s3_loaded", lambda: False)  # as in a fresh process
  monkeypatch.setattr(startup, "allow_tensorflow_io", lambda: asked.append("tensorflow_io"))
  path, _ = span_declaration(tmp_path)
  compile_digits(tmp_path / "out", "--dataset", str(path), "--pipeline-name", "spans",
                 data_root="s3://nowhere-bucket/data")
  assert asked == [], "compile loaded the S3 file system"


def test_a_folder_of_this_machine_as_data_root_needs_data_root_given(tmp_path, capsys):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                   "--output-dir", str(tmp_path / "out"), "--skip-data-check"])
  err = capsys.readouterr().err
  assert code == 2, err
  assert err.startswith("error: data.root of ") and "a folder of this machine" in err
  assert "expected --data-root with a bucket URI" in err
  assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag,uri", [("--pipeline-root", "minio://mlpipeline/v2/artifacts"),
                                      ("--data-root", "minio://mlpipeline/data"),
                                      ("--serving-dir", "http://models.example.com/serving")])
def test_schemes_tensorflow_cannot_open_are_refused(tmp_path, capsys, flag, uri):
  flags = {"--pipeline-root": "gs://b/r", "--data-root": "gs://b/d", flag: uri}
  code = kubeflow(["compile", "--image", IMAGE, "--output-dir", str(tmp_path / "out"),
                   "--skip-data-check", *[a for item in flags.items() for a in item]])
  err = capsys.readouterr().err.strip().splitlines()
  assert code == 2 and err[-1].startswith(f"error: {flag} {uri}: expected a folder, gs:// "
                                          f"or s3://"), err
  assert not (tmp_path / "out").exists()


def test_notify_adds_an_exit_step_that_runs_whatever_happened(tmp_path):
  from kfp import components
  spec, job = compile_digits(tmp_path, "--notify", "https://hooks.example.com/services/T0/B0",
                             "--final-status")
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
  components.load_component_from_file(str(tmp_path / "pipeline.yaml"))
  root = spec["root"]["dag"]["tasks"]
  assert set(root) == {"exit-handler-1", "notify"}, set(root)
  assert root["notify"]["dependentTasks"] == ["exit-handler-1"]
  assert root["notify"]["triggerPolicy"] == {"strategy": "ALL_UPSTREAM_TASKS_COMPLETED"}
  assert "cachingOptions" not in root["notify"], "the exit step must run every time"
  # --final-status: the notice takes Kubeflow's state (2.14+; compiled only when asked).
  assert root["notify"]["inputs"]["parameters"]["status"] == {
      "taskFinalStatus": {"producerTask": "exit-handler-1"}}, root["notify"]["inputs"]
  assert set(spec_tasks(spec)) >= {"ImportExampleGen", "Trainer", "Pusher"}
  defaults = spec["root"]["inputDefinitions"]["parameters"]
  assert defaults["notify_url"]["defaultValue"] == "https://hooks.example.com/services/T0/B0"
  assert job["runtimeConfig"]["parameterValues"]["notify_url"].startswith("https://hooks")


def test_without_notify_there_is_no_exit_step(compiled):
  assert "notify" not in compiled["spec"]["root"]["dag"]["tasks"]
  assert "notify_url" not in compiled["spec"]["root"]["inputDefinitions"]["parameters"]


def test_a_notify_url_that_is_no_url_gives_one_clear_line(tmp_path, capsys):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                   "--data-root", "gs://b/d", "--output-dir", str(tmp_path / "out"),
                   "--skip-data-check", "--notify", "hooks.example.com/x"])
  err = capsys.readouterr().err.strip().splitlines()
  assert code == 2 and "--notify: expected a webhook URL (http:// or https://), found " \
      "'hooks.example.com/x'" in err[-1], err


def test_platform_config_parses_strictly_and_reaches_only_the_named_steps(tmp_path):
  from kfp import components
  from kfp.kubernetes import kubernetes_executor_config_pb2 as k8s
  compile_digits(tmp_path, "--node-selector", "Trainer:cloud.google.com/gke-nodepool=gpu",
                 "--toleration", "Trainer:nvidia.com/gpu:NoSchedule",
                 "--image-pull-secret", "regcred",
                 "--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID",
                 "--env", "S3_ENDPOINT=http://minio-service.kubeflow:9000",
                 "--notify", "https://hooks.example.com/services/T0/B0")
  with open(tmp_path / "pipeline.yaml") as f:
    spec, platform = yaml.safe_load_all(f)
  parsed = json_format.ParseDict(platform, pipeline_spec_pb2.PlatformSpec())
  executors = parsed.platforms["kubernetes"].deployment_spec.executors
  configs = {label: json_format.ParseDict(json_format.MessageToDict(struct),
                                          k8s.KubernetesExecutorConfig())
             for label, struct in executors.items()}
  assert set(configs) == set(spec["deploymentSpec"]["executors"])
  trainer = configs["Trainer_executor"]
  assert dict(trainer.node_selector.labels) == {"cloud.google.com/gke-nodepool": "gpu"}
  assert [(t.key, t.operator, t.effect) for t in trainer.tolerations] == [
      ("nvidia.com/gpu", "Exists", "NoSchedule")]
  for label, config in configs.items():
    assert [s.secret_name for s in config.image_pull_secret] == ["regcred"], label
    assert config.secret_as_env[0].key_to_env[0].env_var == "AWS_ACCESS_KEY_ID", label
    if label != "Trainer_executor":
      assert not config.node_selector.labels and not config.tolerations, label
  s3 = {"name": "S3_ENDPOINT", "value": "http://minio-service.kubeflow:9000"}
  for node, label in executor_labels(spec).items():
    assert spec["deploymentSpec"]["executors"][label]["container"]["env"] == [
        {"name": "PIPELINE_NAME", "value": "digits"},
        {"name": "PIPELINE_TASK", "value": node},
        {"name": "PIPELINE_TASK_RETRIES", "value": "2"}, s3,
        # kfp skips its compiler and client in a step, as in KFP's own containers
        {"name": "_KFP_RUNTIME", "value": "true"}], label
  # The exit step's container is a step's: the same environment, no record names.
  assert spec["deploymentSpec"]["executors"]["exec-notify"]["container"]["env"] == [
      s3, {"name": "_KFP_RUNTIME", "value": "true"}]
  loaded = components.load_component_from_file(str(tmp_path / "pipeline.yaml"))
  assert set(loaded.component_spec.inputs) == RUNTIME_PARAMETERS | {"notify_url"}
  assert "regcred" not in json.dumps(json.loads((tmp_path / "pipeline_job.json").read_text()))


@pytest.mark.parametrize("flags,message", [
    (["--env", "AWS_SECRET_ACCESS_KEY=x"], "--env AWS_SECRET_ACCESS_KEY: expected no "
     "credentials in the compiled spec"),
    (["--node-selector", "Trainr:pool=gpu"], "--node-selector: expected a component"),
    (["--toleration", "Trainer:gpu=yes:Sometimes"], "EFFECT one of NoSchedule"),
    (["--secret-env", "creds:accesskey"], "--secret-env: expected SECRET:KEY=ENV_VAR"),
])
def test_bad_platform_flags_give_one_clear_line(tmp_path, capsys, flags, message):
  code = kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/r",
                   "--data-root", "gs://b/d", "--output-dir", str(tmp_path / "out"),
                   "--skip-data-check", *flags])
  err = capsys.readouterr().err
  assert code == 2 and message in err, err
  assert "Traceback" not in err


def test_a_trainer_given_a_gpu_is_told_to_insist_on_it(compiled):
  """--resource Trainer:gpus=1 makes the Trainer stop, rather than train on
  the CPU, when TensorFlow cannot use the GPU (tests/unit/test_docker_image.py)."""
  custom = json.loads(compiled["spec"]["root"]["dag"]["tasks"]["Trainer"]["inputs"]
                      ["parameters"]["custom_config"]["runtimeValue"]["constant"])
  assert custom["training"]["gpus"] == 1


def test_the_tuner_is_compiled_only_with_tuning_declared(compiled, tmp_path):
  assert "Tuner" not in compiled["spec"]["root"]["dag"]["tasks"]
  raw = digits_raw()
  raw["schema"] = DIGITS_SCHEMA
  raw["tuning"] = {"max_trials": 4, "space": {"learning_rate": {"log_uniform": [1e-4, 1e-2]}}}
  path = write_declaration(tmp_path, raw)
  spec, _ = compile_digits(tmp_path / "out", "--dataset", path, "--tune-workers", "3")
  tasks = spec["root"]["dag"]["tasks"]
  assert tasks["Trainer"]["inputs"]["artifacts"]["hyperparameters"] == {
      "taskOutputArtifact": {"outputArtifactKey": "best_hyperparameters",
                             "producerTask": "Tuner"}}, tasks["Trainer"]["inputs"]
  params = spec["root"]["inputDefinitions"]["parameters"]
  # `--param tune=yes` asks for a new search; without spans the step
  # finds the latest search itself, so Kubeflow must not cache it.
  assert params["tune"]["defaultValue"] == "" and "cachingOptions" not in tasks["Tuner"]
  executor = spec["components"]["Tuner"]["executorLabel"]
  env = spec["deploymentSpec"]["executors"][executor]["container"]["env"]
  assert {"name": "TUNER_WORKERS", "value": "3"} in env, env


def test_a_users_own_worker_image_is_kept():
  from kubeflow.compile.compiler import beam_args_for_image
  mine = ["--runner=FlinkRunner", "--sdk_container_image=r/mine:2"]
  assert beam_args_for_image(mine, "r/i:1") == mine
  assert beam_args_for_image([], "r/i:1") == []  # in-pod DirectRunner: no option, no sdist


def test_the_step_passes_tfx_no_beam_argument_of_its_own():
  """absl hands TFX's parser argv[0] too, which TFX kept as a Beam argument
  and built an sdist for ("Creating temporary sdist package")."""
  from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor as tfx_entry

  from kubeflow.steps.entrypoint import beam_args_of
  argv = ["/opt/venv/lib/python3.10/site-packages/kubeflow/steps/entrypoint.py",
          "--executor_class_path", "x.Y", "--json_serialized_invocation_args", "{}"]
  parsed = tfx_entry._parse_flags(argv)
  assert parsed[1] == [argv[0]], parsed[1]  # what TFX alone would use
  assert beam_args_of(parsed, argv[0]) == []
  assert beam_args_of(tfx_entry._parse_flags(argv + ["--runner=FlinkRunner"]), argv[0]) == [
      "--runner=FlinkRunner"]


def test_every_step_retries_with_backoff_unless_told_not_to(tmp_path):
  from kubeflow.compile.spec import tasks
  spec, job = compile_digits(tmp_path / "default", "--notify", "http://127.0.0.1:1/hook")
  policies = {name: task.get("retryPolicy") for name, task in tasks(spec).items()}
  assert set(policies) >= {"Trainer", "Pusher", "Transform"}, policies
  assert all(p == {"maxRetryCount": 2, "backoffDuration": "30s", "backoffFactor": 2.0,
                   "backoffMaxDuration": "3600s"} for p in policies.values()), policies
  # The webhook step is not retried: a retry would post the outcome twice.
  assert "retryPolicy" not in spec["root"]["dag"]["tasks"]["notify"]
  assert tasks(job["pipelineSpec"])["Trainer"]["retryPolicy"]["maxRetryCount"] == 2
  # The kfp SDK reads it back (strict proto parsing).
  from google.protobuf import json_format
  from kfp.pipeline_spec import pipeline_spec_pb2
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
  spec, _ = compile_digits(tmp_path / "none", "--retries", "0")
  assert not any("retryPolicy" in t for t in tasks(spec).values())


def test_keep_runs_ends_each_run_with_retention_after_the_report(tmp_path):
  spec, _ = compile_digits(tmp_path / "out", "--keep-runs", "3",
                           "--notify", "http://127.0.0.1:1/hook")
  tasks = spec_tasks(spec)
  step = tasks["Retention"]
  assert step["dependentTasks"] == ["RunReport"] and "cachingOptions" not in step
  params = step["inputs"]["parameters"]
  assert params["keep"] == {"runtimeValue": {"constant": "3"}}
  assert params["serving_dir"] == {"componentInputParameter": "serving_dir"}
  never = set(json.loads(params["never_cached"]["runtimeValue"]["constant"]))
  assert never >= {"ImportExampleGen", "BaselineModel", "RunReport", "Retention", "notify"}
  assert not never & {"Trainer", "Transform", "StatisticsGen"}, never
  container = spec["deploymentSpec"]["executors"]["Retention_executor"]["container"]
  assert container["command"] == ["python", "-m", "kubeflow.steps.retention"]
  assert {e["name"]: e["value"] for e in container["env"]}["PIPELINE_TASK"] == "Retention"
  assert spec["components"]["Retention"]["outputDefinitions"]["artifacts"]["summary"][
      "artifactType"]["schemaTitle"] == "system.Markdown"
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
  # Without spans there is no cache epoch: ImportExampleGen is never cached.
  assert not any("cache_epoch" in t.get("inputs", {}).get("parameters", {})
                 for t in tasks.values())


@pytest.mark.parametrize("value", ["-1", "11", "two"])
def test_a_bad_retry_count_is_one_line(tmp_path, capsys, value):
  assert kubeflow(["compile", "--image", IMAGE, "--pipeline-root", "gs://b/p",
                   "--output-dir", str(tmp_path), "--retries", value]) == 2
  err = capsys.readouterr().err
  assert f"argument --retries: expected a whole number from 0 to 10, found '{value}'" in err, \
      err


def test_the_compiled_evaluator_judges_the_declared_slices(tmp_path):
  """The slices' rules travel inside the Evaluator's step: a cluster run
  judges the slices a local run does. Bucket slices bring the schema."""
  raw = digits_raw()
  raw["schema"] = DIGITS_SCHEMA
  raw["evaluation"] = {"max_change": 0.05, "max_change_on": "interval",
                       "slices": ["shape", {"feature": "ink", "buckets": [0.2, 0.4]}]}
  path = write_declaration(tmp_path, raw)
  spec, _ = compile_digits(tmp_path / "out", "--dataset", str(path))
  task = spec["root"]["dag"]["tasks"]["Evaluator"]
  constant = task["inputs"]["parameters"]["evaluation_rules"]["runtimeValue"]["constant"]
  rules = json.loads(constant)
  assert [s["feature"] for s in rules["slices"]] == ["shape", "ink"], rules
  assert rules["slices"][1]["buckets"] == [0.2, 0.4] and rules["max_change"] == 0.05
  assert rules["max_change_on"] == "interval" and rules["min_slice_examples"] == 100
  assert "schema" in task["inputs"]["artifacts"], task["inputs"]["artifacts"]
  config = task["inputs"]["parameters"]["eval_config"]["runtimeValue"]["constant"]
  config = config if isinstance(config, dict) else json.loads(config)
  slicing = [json.dumps(s) for s in config["slicing_specs"]]
  assert any('"shape"' in s for s in slicing) and any("CASE WHEN ink < 0.2" in s
                                                      for s in slicing), slicing


def test_the_trainer_step_carries_its_workers_settings_and_nothing_else_does(tmp_path):
  """--train-workers 2: the Trainer's configuration asks for the job; its
  step's environment says what each worker gets, the Trainer's own
  resources, placement and environment (kubeflow/compile/train_job.py)."""
  spec, _ = compile_digits(tmp_path, "--train-workers", "2", "--train-engine", "trainjob",
                           "--resource", "Trainer:cpu=4,memory=16,gpus=1",
                           "--node-selector", "Trainer:pool=gpu",
                           "--toleration", "Trainer:nvidia.com/gpu:NoSchedule",
                           "--node-selector", "Transform:pool=cpu",
                           "--image-pull-secret", "regcred",
                           "--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID",
                           "--env", "S3_ENDPOINT=http://minio:9000", "--train-timeout", "3600")
  executors = spec["deploymentSpec"]["executors"]
  pods = {node: [e["value"] for e in executors[label]["container"]["env"]
                 if e["name"] == "TRAIN_JOB_POD"] for node, label in executor_labels(spec).items()}
  assert {node for node, found in pods.items() if found} == {"Trainer"}, pods
  # The report step takes a root step's container whatever order the tasks
  # come in: with the Trainer first it once took the Trainer's own (its
  # workers' settings and its GPU).
  steps = {t: task for t, task in spec_tasks(spec).items() if t != "RunReport"}
  trainer_first = {"Trainer": steps.pop("Trainer"), **steps}
  report_step.add(spec, trainer_first, None)
  container = executors["RunReport_executor"]["container"]
  assert not [e for e in container["env"] if e["name"] == "TRAIN_JOB_POD"], container["env"]
  assert "gpu" not in json.dumps(container.get("resources", {})), container["resources"]
  pod = json.loads(pods["Trainer"][0])
  assert pod == {
      "image": IMAGE, "env": {"S3_ENDPOINT": "http://minio:9000"},
      "resources": {"cpu": 4.0, "memory_gb": 16.0, "gpus": 1, "gpu_type": "nvidia.com/gpu"},
      "nodeSelector": {"pool": "gpu"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "imagePullSecrets": ["regcred"], "secretEnv": [["s3-creds", "accesskey",
                                                      "AWS_ACCESS_KEY_ID"]],
      "timeoutSeconds": 3600}
  custom = json.loads(spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]
                      ["custom_config"]["runtimeValue"]["constant"])
  assert custom["workers"] == {"count": 2, "engine": "trainjob"}
  # The step itself only watches the job: no GPU, not on the GPU pool (two
  # workers on a pool of two free GPUs would otherwise leave one Pending).
  assert executors["Trainer_executor"]["container"]["resources"] == {
      "cpuRequest": 1, "memoryRequest": 2}
  with open(tmp_path / "pipeline.yaml") as f:
    _, platform = yaml.safe_load_all(f)
  placed = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
  assert "nodeSelector" not in placed["Trainer_executor"], placed["Trainer_executor"]
  assert "tolerations" not in placed["Trainer_executor"], placed["Trainer_executor"]
  assert placed["Trainer_executor"]["imagePullSecret"] == [{"secretName": "regcred"}]
  assert placed["Transform_executor"]["nodeSelector"] == {"labels": {"pool": "cpu"}}


def test_with_one_worker_the_trainer_step_trains_on_its_own_gpu_and_pool(tmp_path):
  spec, _ = compile_digits(tmp_path, "--resource", "Trainer:cpu=4,memory=16,gpus=1",
                           "--node-selector", "Trainer:pool=gpu")
  label = executor_labels(spec)["Trainer"]
  resources = spec["deploymentSpec"]["executors"][label]["container"]["resources"]
  assert resources["accelerator"] == {"type": "nvidia.com/gpu", "count": "1"}, resources
  with open(tmp_path / "pipeline.yaml") as f:
    _, platform = yaml.safe_load_all(f)
  assert platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"][label][
      "nodeSelector"] == {"labels": {"pool": "gpu"}}


def test_a_vertex_trainer_step_is_handed_its_pipeline_jobs_place(tmp_path):
  """Issue 57: the CustomJob took the project from google.auth, on a Vertex
  step Vertex's tenant project. The compiled Trainer now takes its
  PipelineJob's project, region, service account and network from Vertex's
  placeholders, through its command (trainer/jobs/vertex.py reads them)."""
  spec, _ = compile_digits(tmp_path, "--backend", "vertex", "--train-workers", "2",
                           "--train-engine", "vertex")
  task = spec["root"]["dag"]["tasks"]["Trainer"]
  component = spec["components"][task["componentRef"]["name"]]
  command = spec["deploymentSpec"]["executors"][component["executorLabel"]]["container"][
      "command"]
  given = {name: value["runtimeValue"]["constant"]
           for name, value in task["inputs"]["parameters"].items()
           if value.get("runtimeValue", {}).get("constant", "").startswith("{{$.pipeline_")}
  assert sorted(given.values()) == sorted(train_job.PIPELINE_PLACEHOLDERS.values()), given
  assert command[0] == "env" and all(
      f"{{{{$.inputs.parameters['{name}']}}}}" in " ".join(command) for name in given), command
  assert command[-3:] == ["python", "-m", "kubeflow.steps.entrypoint"], command

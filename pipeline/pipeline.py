"""The pipeline, defined once: every runner calls `create_pipeline`.

ImportExampleGen -> StatisticsGen -> SchemaGen (or CuratedSchema) ->
ExampleValidator -> AnomaliesGate -> Transform -> Trainer -> Evaluator ->
ServingCheck -> Pusher, with BaselineModel (the model in production) feeding
the Evaluator; with spans, SpanWindow first and DriftGate before the
ExampleValidator; with `tuning:` in the declaration, a Tuner before the
Trainer; with `--kserve`, KServeDeploy after the Pusher.

Every step is an ordinary component, so the same DAG compiles for Kubeflow
Pipelines v2 and runs on its open-source backend (which runs no importer-free
resolver steps) as well as on LocalDagRunner.
"""

import dataclasses
import json
from typing import Callable, List, Optional

from tfx.components.trainer.component import Trainer
from tfx.orchestration import metadata
from tfx.orchestration import pipeline as tfx_pipeline

from components.baseline.baseline import BaselineModel
from components.evaluator.eval_config import eval_config
from components.evaluator.evaluator import Evaluator
from components.pusher.pusher import Pusher
from components.serving_check.serving_check import ServingCheck
from components.transform.transform import Transform
from components.tuner.tuner import Tuner, tuner_config
from dataset import spans
from pipeline.cache_keys import checkpoint_root, to_json, transform_config
from pipeline.config import ConfigError, PipelineConfig
from pipeline.data_components import DataNodes, data_components
from pipeline.inputs import RunInputs
from pipeline.run_parameters import RunParameters, WindowParameters
from pipeline.served import add_served_steps
from trainer import jobs
from trainer.checkpoints import CONFIG_KEY
from trainer.export import serving_contract

PREPROCESSING_FN = "components.transform.preprocessing.preprocessing_fn"
RUN_FN = "trainer.run.run_fn"


def create_components(config: PipelineConfig, inputs: RunInputs,
                      window_step: Optional[Callable] = None) -> List:
  """The pipeline's components, in order."""
  run = RunParameters.of(config)
  window_step, by_window = _window(config, run, inputs, window_step)
  data = data_components(config, run, by_window)
  nodes = data.nodes + _model_components(config, run, inputs, by_window, data)
  add_served_steps(config, run, data, nodes)  # ServedScore, KServeDeploy
  if window_step:
    from_step = [value for _, value in by_window.items()]
    for node in nodes:
      if any(value is step_value for value in node.exec_properties.values()
             for step_value in from_step):
        node.add_upstream_node(window_step)
    nodes.insert(0, window_step)
  _check_resources(config, [n.id for n in nodes])
  return nodes


def _window(config: PipelineConfig, run: RunParameters, inputs: RunInputs,
            window_step: Optional[Callable]):
  """(the SpanWindow step or None, what the window sets: WindowParameters).

  Resolved inputs (a local run) are constants, or runtime parameters with
  those defaults. A compiled pipeline over spans resolves its window in its
  first step (kubeflow/steps/span_window.py), whose outputs the others read.
  """
  resolved = WindowParameters(
      **inputs.protos, served_version=inputs.served_version, training_key=inputs.training_key,
      drift_baseline=(inputs.drift_baseline if spans.has_spans(config.declaration.data)
                      else None),
      tuning_search=inputs.tuning_search if config.declaration.tuning else None)
  if not inputs.window.unresolved:
    return None, resolved.as_parameters(config)
  if window_step is None:
    raise ConfigError("a pipeline whose span window is resolved when it runs needs the "
                      "step that resolves it (kubeflow/steps/span_window.py); found none")
  step = window_step(
      data_root=run.data_root, serving_dir=run.serving_dir,
      train_steps=run.train_steps,
      window_spec=window_spec(config, inputs.trainer_config))
  return step, WindowParameters(**{name: step.outputs[name].future()[0].value
                               for name in WindowParameters.names()})


def window_spec(config: PipelineConfig, trainer_config: dict) -> str:
  """What the step needs besides its runtime parameters, fixed when the
  pipeline is compiled: the data's patterns and window, the Trainer's
  settings (for the training key) and the evaluation steps."""
  data = config.declaration.data
  return json.dumps({
      "data": {"compression": data.compression, "splits": dict(data.splits),
               "pattern": data.pattern, "hash_buckets": dict(data.hash_buckets),
               "window": data.window},
      "settings": trainer_config, "materialize": config.materialize,
      "tuning": config.declaration.tuning and config.declaration.tuning.to_dict(),
      "eval_steps": config.training.eval_steps}, sort_keys=True)


def _model_components(config: PipelineConfig, run: RunParameters, inputs: RunInputs,
                      by_window: WindowParameters, data: DataNodes) -> List:
  """Transform, BaselineModel, the Tuner (with tuning), the Trainer, the
  Evaluator, ServingCheck and the Pusher."""
  examples, schema = data.example_gen.outputs["examples"], data.schema_gen.outputs["schema"]
  # Builds the preprocessing graph from the declaration, and applies it
  # unless the Trainer's input pipeline is to (materialize=False). Its
  # analyzer cache skips spans analysed by earlier runs. No statistics:
  # StatisticsGen has them, and computing them would read every span again.
  # Only spans share analysis across runs (components/transform/transform.py).
  transform = Transform(
      examples=examples, schema=schema, materialize=config.materialize,
      preprocessing_fn=PREPROCESSING_FN, splits_config=by_window.splits_config,
      disable_statistics=True, custom_config=transform_config(config),
      disable_analyzer_cache=not spans.has_spans(config.declaration.data))
  transform.add_upstream_node(data.gate)
  # The model in production (the newest pushed, unless this very run pushed
  # it), if any: the baseline to beat, and the weights to warm-start from.
  # The version and this run's training key were chosen when the run started
  # (pipeline/inputs.py), or by the SpanWindow step; without spans on
  # Kubeflow, when the step runs.
  baseline = BaselineModel(
      serving_dir=run.serving_dir,
      served_version=by_window.served_version, training_key=by_window.training_key)
  tuner, trainer_node = _training(config, run, inputs, by_window, examples, schema, transform,
                                  baseline)
  # Blesses the model only if it clears the thresholds, on this window's
  # eval splits, and does no worse than the baseline there; so does each
  # declared slice. The schema says which columns TFMA parses: the label
  # and the slices' features (bucket slices are SQL over them).
  decl = config.declaration
  evaluator = Evaluator(examples=examples, model=trainer_node.outputs["model"],
                        baseline_model=baseline.outputs["model"],
                        eval_config=eval_config(config.declaration, config.evaluation), rules=config.evaluation,
                        classes=decl.label.class_names(), schema=schema,
                        image=next(iter(decl.of_kind("image")), None))
  # Set after construction: on Kubeflow a runtime parameter holding the JSON list.
  evaluator.exec_properties["example_splits"] = by_window.example_splits
  # A blessed model must also serve, in a fresh process, through both signatures.
  serving_check = ServingCheck(
      model=trainer_node.outputs["model"], examples=examples,
      blessing=evaluator.outputs["blessing"],
      contract=json.dumps({"contract": serving_contract(decl),
                           "budget": dict(decl.serving.p99_ms)}, sort_keys=True),
      example_splits=by_window.example_splits)
  # Copies a model blessed by both into a new version folder of the serving
  # dir, with its model card, unless that dir already holds this very model.
  pusher = Pusher(model=trainer_node.outputs["model"],
                  model_blessing=evaluator.outputs["blessing"],
                  infra_blessing=serving_check.outputs["infra_blessing"],
                  serving_dir=run.serving_dir, card=_card(config),
                  scheduled_by=run.scheduled_by,
                  statistics=data.statistics_gen.outputs["statistics"],
                  drift=data.drift_gate.outputs["result"] if data.drift_gate else None,
                  hyperparameters=tuner.outputs["best_hyperparameters"] if tuner else None)
  return [transform, baseline, *([tuner] if tuner else []), trainer_node, evaluator,
          serving_check, pusher]


def _card(config: PipelineConfig) -> dict:
  """What the model card tells that no input artifact holds: the pipeline,
  and the settings it was built with (on Kubeflow a run's runtime
  parameters, such as its steps, may differ)."""
  evaluation = config.evaluation
  return {"pipeline": config.pipeline_name, "settings": {
      "training": {k: v for k, v in dataclasses.asdict(config.training).items()
                   if v not in (None, "", (), [])},
      "materialize": config.materialize,
      "evaluation": {"metric": evaluation.metric, "threshold": evaluation.threshold,
                     "max_change": evaluation.max_change,
                     "max_change_on": evaluation.max_change_on,
                     "slices": [s.feature for s in evaluation.slices]}}}


def _training(config: PipelineConfig, run: RunParameters, inputs: RunInputs, by_window: WindowParameters,
              examples, schema, transform, baseline):
  """(the Tuner or None, the Trainer)."""
  if config.materialize:
    examples = transform.outputs["transformed_examples"]
  tuner = _tuner(config, run, by_window, examples, transform)
  # Trains the Keras model on the transformed examples, or on the examples
  # with the transform graph applied as they are read; with tuning, with the
  # Tuner's best settings over its own.
  trainer_node = Trainer(
      run_fn=RUN_FN, examples=examples,
      transform_graph=transform.outputs["transform_graph"], schema=schema,
      base_model=baseline.outputs["model"],
      hyperparameters=tuner.outputs["best_hyperparameters"] if tuner else None,
      train_args=by_window.train_args, eval_args=by_window.eval_args,
      # Not in the training key: where checkpoints go changes no model.
      custom_config={**inputs.trainer_config, CONFIG_KEY: checkpoint_root(config),
                     **({jobs.CONFIG_KEY: config.workers} if config.workers else {})})
  return tuner, trainer_node


def _tuner(config: PipelineConfig, run: RunParameters, by_window: WindowParameters, examples, transform):
  """The Tuner, when the declaration has `tuning:`: it reuses the latest
  search or runs one (components/tuner/tuner.py), on the Trainer's data."""
  if not config.declaration.tuning:
    return None
  return Tuner(
      examples=examples, transform_graph=transform.outputs["transform_graph"],
      config=tuner_config(config.declaration, config.training, config.materialize),
      serving_dir=run.serving_dir,
      train_args=to_json(by_window.train_args),
      eval_args=to_json(by_window.eval_args), search=by_window.tuning_search,
      # Locally a new search's request is in its id (pipeline/inputs.py); on
      # Kubeflow, `tune` asks for one at run time.
      tune=run.tune)


def _check_resources(config: PipelineConfig, ids: List[str]) -> None:
  for node in config.resources:
    if node not in ids:
      raise ConfigError(f"config field 'resources': expected a component id "
                        f"({', '.join(ids)}), found {node!r}")


def create_pipeline(config: PipelineConfig, inputs: RunInputs,
                    metadata_connection_config: Optional[
                        metadata.ConnectionConfigType] = None,
                    window_step: Optional[Callable] = None) -> tfx_pipeline.Pipeline:
  """The pipeline for `config`, for any runner. It reads no file.

  Args:
    config: the validated run configuration.
    inputs: what the run reads (pipeline/inputs.py): `resolve_inputs` for a
      local run, `unresolved_inputs` for a compiled Kubeflow pipeline.
    metadata_connection_config: ML Metadata connection; None lets the runner
      choose (Kubeflow provides its own).
    window_step: with unresolved inputs, the component that resolves them
      when the run starts: the compiler hands in Kubeflow's SpanWindow
      (kubeflow/steps/span_window.py), which runs in the image, so the DAG
      imports no step code of a runner's.

  Returns:
    The TFX pipeline.
  """
  return tfx_pipeline.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=create_components(config, inputs, window_step),
      enable_cache=config.enable_cache,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=list(config.beam_args))

"""ServedScore: the served model scored on the window's newest span.

Runs TFMA on the served model (BaselineModel's copy), through the signature
it takes Examples by (trainer/export.py `examples_signature`), on every
split of the newest span (score.newest_span_splits), with the Evaluator's
metrics and slices but no thresholds (nothing is judged here), and the 95%
intervals. Records the
score beside the serving dir's versions (components/served_score/score.py).
To run before DriftGate and AnomaliesGate, so a run they stop records it.
"""

import html
import json
import os
import tempfile

import apache_beam as beam
import tensorflow_model_analysis as tfma
from absl import logging
from apache_beam.options.pipeline_options import PipelineOptions
from google.protobuf import json_format
from tfx.dsl.components.base import base_beam_component, base_beam_executor, executor_spec
from tfx.types import artifact_utils, standard_artifacts
from tfx.types.component_spec import ChannelParameter, ComponentSpec, ExecutionParameter
from tfx.utils import path_utils
from tfx_bsl.tfxio import tf_example_record

from components import ui_artifacts
from components.baseline.baseline import has_model, served_signature, served_source
from components.evaluator import evaluation
from components.served_score import score
from dataset import spans
from dataset.thresholds import Evaluation
from runtime.beam import NoPrism
from serving import history


def without_thresholds(eval_config_json: str, signature: str) -> tfma.EvalConfig:
  """The Evaluator's config, judging nothing, calling `signature`."""
  config = json.loads(eval_config_json)
  for spec in config.get("metrics_specs", []):
    for metric in spec.get("metrics", []):
      metric.pop("per_slice_thresholds", None)
      metric.pop("threshold", None)
  for spec in config.get("model_specs", []):
    spec["signature_name"] = signature
  return json_format.ParseDict(config, tfma.EvalConfig())


def score_served(examples, model, eval_config_json: str, rules: Evaluation,
                 serving_dir: str, beam_args=()) -> dict:
  """The served model's record on the newest span ({} when nothing is served)."""
  if not has_model(model):
    return {}
  splits = score.newest_span_splits(artifact_utils.decode_split_names(examples.split_names))
  config = without_thresholds(eval_config_json, served_signature(model))
  shared = tfma.default_eval_shared_model(
      eval_saved_model_path=path_utils.serving_model_path(model.uri), eval_config=config)
  with tempfile.TemporaryDirectory() as out:
    # TFMA's run_model_analysis takes one pattern; the Evaluator's way takes all.
    read = tf_example_record.TFExampleRecord(
        file_pattern=[os.path.join(artifact_utils.get_split_uri([examples], split), "*")
                      for split in splits],
        raw_record_column_name=tfma.ARROW_INPUT_COLUMN)
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as p:
      _ = (p | "Read" >> read.BeamSource() | "Score" >> tfma.ExtractEvaluateAndWriteResults(
          eval_shared_model=shared, eval_config=config, output_path=out))
    found = evaluation.load(out)
  version = os.path.basename(served_source(model))
  span = spans.span_of_split(splits[0]) if splits else None
  record = score.scored(found, eval_config_json, version, span, rules)
  score.write(serving_dir, record)
  return record


class Executor(NoPrism, base_beam_executor.BaseBeamExecutor):
  """Scores the served model; publishes the record (and {} when none serves)."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    record = score_served(
        artifact_utils.get_single_instance(input_dict["examples"]),
        artifact_utils.get_single_instance(input_dict["model"]),
        exec_properties["eval_config"],
        Evaluation.from_dict(json.loads(exec_properties["rules"])),
        exec_properties["serving_dir"], self._beam_pipeline_args or ())
    blessed = (history.blessed(os.path.join(exec_properties["serving_dir"], record["version"]))
               if record else None)
    line = score.verdict(record, (blessed or {}).get("value")) if record else ""
    out = artifact_utils.get_single_instance(output_dict["score"])
    out.value = json.dumps({**record, "line": line}, sort_keys=True)
    for shown in output_dict.get("page", []):  # the Kubeflow run page's chart
      from components.served_score import chart
      shown.value = ("<!DOCTYPE html><html><body><p>" + html.escape(
          line or "The served model is within its threshold.") + "</p>"
          + chart.svg(score.history(exec_properties["serving_dir"])) + "</body></html>")
    if line:
      logging.warning("%s", line)
      print(line, flush=True)


class ServedScoreSpec(ComponentSpec):
  PARAMETERS = {"eval_config": ExecutionParameter(type=str),
                "rules": ExecutionParameter(type=str),
                "serving_dir": ExecutionParameter(type=str)}
  INPUTS = {"examples": ChannelParameter(type=standard_artifacts.Examples),
            "model": ChannelParameter(type=standard_artifacts.Model)}
  OUTPUTS = {"score": ChannelParameter(type=standard_artifacts.String),
             "page": ChannelParameter(type=ui_artifacts.HTML)}


class ServedScore(base_beam_component.BaseBeamComponent):
  """The served model on the newest span, before the gates."""
  SPEC_CLASS = ServedScoreSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, examples, model, eval_config: str, rules: str, serving_dir):
    from tfx.types import channel
    super().__init__(spec=ServedScoreSpec(
        examples=examples, model=model, eval_config=eval_config, rules=rules,
        serving_dir=serving_dir, score=channel.Channel(type=standard_artifacts.String),
        page=channel.Channel(type=ui_artifacts.HTML)))

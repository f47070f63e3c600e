"""ServedScore: the served model scored on the window's newest span.

Runs TFMA on the served model (BaselineModel's copy), through the signature
it takes Examples by (trainer/export.py `examples_signature`), on every
split of the newest span (score.newest_span_splits), with the Evaluator's
blessing metric and slices (`scoring_config`) but no thresholds (nothing is
judged here), and the 95% intervals. Records the score beside the serving
dir's versions (components/served_score/score.py).
To run before DriftGate and AnomaliesGate, so a run they stop records it.
"""

import json
import os
import tempfile

import apache_beam as beam
import tensorflow_model_analysis as tfma
from google.protobuf import json_format
from tfx.dsl.components.base import base_beam_component, base_beam_executor, executor_spec
from tfx.types import artifact_utils, standard_artifacts
from tfx.types.component_spec import ChannelParameter, ComponentSpec, ExecutionParameter
from tfx.utils import path_utils
from tfx_bsl.tfxio import tf_example_record

import serving
from components import ui_artifacts
from components.baseline.baseline import has_model, served_signature, served_source
from components.evaluator import evaluation
from components.served_score import chart, score
from dataset import spans
from dataset.thresholds import Evaluation
from runtime.beam import NoPrism
from serving import history


def scoring_config(eval_config_json: str, signature: str) -> tfma.EvalConfig:
  """The Evaluator's config cut to what is recorded, the blessing metric
  and the count, with their intervals and slices; judging nothing, calling
  `signature`. Without the Evaluator's other metrics and plots (the
  confusion matrices, each with its jackknife), which nothing here reads."""
  config = json.loads(eval_config_json)
  for spec in config.get("metrics_specs", []):
    spec["metrics"] = [m for m in spec.get("metrics", []) if m["class_name"] == "ExampleCount"
                       or m.get("per_slice_thresholds") or m.get("threshold")]
    for metric in spec["metrics"]:
      metric.pop("per_slice_thresholds", None)
      metric.pop("threshold", None)
  config["metrics_specs"] = [spec for spec in config.get("metrics_specs", []) if spec["metrics"]]
  for spec in config.get("model_specs", []):
    spec["signature_name"] = signature
  return json_format.ParseDict(config, tfma.EvalConfig())


def score_served(examples, model, eval_config_json: str, rules: Evaluation,
                 serving_dir: str, make_pipeline=None) -> dict:
  """The served model's record on the newest span, or {"note": why none}:
  nothing served; BaselineModel handed over an older version than the
  newest (a re-run beside a version this run's key pushed); or the served
  version was trained on that span, which is then not unseen."""
  if not has_model(model):
    return {"note": "nothing is served yet"}
  source = served_source(model)
  version, newest = os.path.basename(source), serving.latest(serving_dir)
  splits = score.newest_span_splits(artifact_utils.decode_split_names(examples.split_names))
  if newest is None or os.path.basename(newest) != version:
    return {"note": f"not scored: version {version} is not the newest in {serving_dir}"}
  span = spans.span_of_split(splits[0]) if splits else None
  if not score.unseen(serving.trained_on(source), splits):
    return {"note": f"not scored: version {version} was trained on span {span}"}
  config = scoring_config(eval_config_json, served_signature(model))
  shared = tfma.default_eval_shared_model(
      eval_saved_model_path=path_utils.serving_model_path(model.uri), eval_config=config)
  with tempfile.TemporaryDirectory() as out:
    # TFMA's run_model_analysis takes one pattern; the Evaluator's way takes all.
    read = tf_example_record.TFExampleRecord(
        file_pattern=[os.path.join(artifact_utils.get_split_uri([examples], split), "*")
                      for split in splits],
        raw_record_column_name=tfma.ARROW_INPUT_COLUMN)
    with (make_pipeline or beam.Pipeline)() as p:  # the executor's: its Beam args
      _ = (p | "Read" >> read.BeamSource() | "Score" >> tfma.ExtractEvaluateAndWriteResults(
          eval_shared_model=shared, eval_config=config, output_path=out))
    found = evaluation.load(out)
  record = {**score.scored(found, eval_config_json, version, span, rules),
            "splits": splits, "data_version": score.data_version(splits)}
  score.write(serving_dir, record)
  return record


class Executor(NoPrism, base_beam_executor.BaseBeamExecutor):
  """Scores the served model; publishes the record with its line, or why
  none. Watching never stops the run: a failure to score is a note."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    serving_dir = exec_properties["serving_dir"]
    model = artifact_utils.get_single_instance(input_dict["model"])
    try:
      record = score_served(
          artifact_utils.get_single_instance(input_dict["examples"]), model,
          exec_properties["eval_config"],
          Evaluation.from_dict(json.loads(exec_properties["rules"])), serving_dir,
          self._make_beam_pipeline)
    except Exception as e:  # noqa: BLE001  (an unreadable version, a model TFMA refuses)
      record = {"note": f"not scored: {type(e).__name__}: {e}".splitlines()[0]}
    line = score.verdict(record, history.blessed(os.path.join(serving_dir, record["version"]))
                         ) if "version" in record else ""
    published = {**record, "line": line}
    artifact_utils.get_single_instance(output_dict["score"]).value = json.dumps(
        published, sort_keys=True)
    said = score.said(published)
    for shown in output_dict.get("page", []):  # the Kubeflow run page's chart
      shown.value = ("<!DOCTYPE html><html><body>" + chart.figure(said, serving_dir)
                     + "</body></html>")
    print(said, flush=True)


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

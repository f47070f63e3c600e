"""The Evaluator: TFX's, with an empty baseline taken as none, each declared
slice judged like the whole, and a judgement that says what it judged.

BaselineModel always outputs a Model artifact (a container step cannot
output nothing); before the first push it holds no model. TFX's Evaluator
would try to load it. Here such a baseline is dropped, so the first model is
judged by the value threshold alone, as TFX does when no baseline exists.

TFMA judges the whole eval split against the thresholds in the eval_config
(with `max_change_on: interval`, its value only: the change is judged here,
on its interval). The declaration's slices (`evaluation.slices`, passed
with the rest of `evaluation:` as `evaluation_rules`, so a compiled
pipeline carries them too) are judged here, by components/evaluator/gate.py, from the
metrics TFMA computed for each: a large slice like the whole, a small one
(and a small whole, whose TFMA verdict is then set aside) on its evidence.
A refusal names the slice. Not TFMA's per-slice thresholds: a threshold on
a bucket slice (SQL) is applied to the whole instead (measured; its
validation details say 1 matching slice), and thresholds over several
values are reported as missing slices (tensorflow/model-analysis#150).

The blessing also records its judgement (`JUDGEMENT`): the served version
the candidate was judged against, the metric's values and each slice's
row. Another run may push between this judgement and this run's push, and
the Pusher then refuses (components/pusher/pusher.py); a version it pushes keeps
the judgement beside it (serving.BLESSED).
"""

import contextlib
import dataclasses
import json
import os
import tempfile
from typing import List, Optional, Sequence

from tfx.components.evaluator import component as evaluator_component
from tfx.components.evaluator import constants, executor
from tfx.dsl.components.base import base_component, executor_spec
from tfx.dsl.io import fileio
from tfx.types import Channel, artifact_utils, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter, ExecutionParameter
from tfx.utils import io_utils, path_utils

import serving
from components import ui_artifacts
from components.baseline.baseline import has_model, served_signature, served_source
from components.evaluator import evaluation, gate, image_samples
from dataset.thresholds import Evaluation
from dataset.types import Feature
from runtime.beam import NoPrism
from trainer import export

_BASELINE = standard_component_specs.BASELINE_MODEL_KEY
_SCHEMA = standard_component_specs.SCHEMA_KEY
JUDGEMENT = "judgement.json"  # in the blessing's folder
RULES = "evaluation_rules"  # the declaration's `evaluation:`, as JSON
CLASSES = "classes"  # the label's class names by id, as JSON ([] for regression)
IMAGE = "image_feature"  # the image the report shows (components/evaluator/image_samples.py)
METRICS, CLASSIFICATION = "metrics", "classification_metrics"  # for the run page


class Executor(NoPrism, executor.Executor):
  """Evaluates the candidate; against the baseline only if there is one."""

  def Do(self, input_dict, output_dict, exec_properties):
    baseline = input_dict.get(_BASELINE)
    if baseline and not all(map(has_model, baseline)):
      input_dict = {k: v for k, v in input_dict.items() if k != _BASELINE}
    if input_dict.get(_BASELINE):
      signature = served_signature(input_dict[_BASELINE][0])
      if signature != export.EXAMPLES_SIGNATURE:
        key = standard_component_specs.EVAL_CONFIG_KEY
        exec_properties = {**exec_properties, key: evaluation.with_baseline_signature(
            exec_properties[key], signature)}
    rules = exec_properties.get(RULES)
    rules = Evaluation.from_dict(json.loads(rules)) if rules else None
    if _BASELINE not in input_dict and not (rules and rules.slices):
      # The 95% intervals are for the change against the served model, and
      # for small slices' values (components/evaluator/gate.py); with neither, they
      # would double the Evaluator's time for nothing (docs/performance.md).
      key = standard_component_specs.EVAL_CONFIG_KEY
      exec_properties = {**exec_properties,
                         key: evaluation.without_intervals(exec_properties[key])}
    with judged_columns_only(input_dict, exec_properties) as judged_columns:
      super().Do(judged_columns, output_dict, exec_properties)
    sources = [served_source(a) for a in baseline or ()]
    served = os.path.basename(sources[0]) if sources and sources[0] else serving.NONE
    uri = artifact_utils.get_single_uri(output_dict[standard_component_specs.EVALUATION_KEY])
    found = evaluation.load(uri)
    blessing = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.BLESSING_KEY])
    tfma_blessed = bool(blessing.get_int_custom_property(
        constants.ARTIFACT_PROPERTY_BLESSED_KEY))
    judged = _judge(found, exec_properties[standard_component_specs.EVAL_CONFIG_KEY],
                    rules, served, [] if tfma_blessed else evaluation.failures(uri))
    blessed = gate.blessed(tfma_blessed, judged)
    if blessed != tfma_blessed:
      _set_blessed(blessing, blessed)
    fileio.makedirs(blessing.uri)
    with fileio.open(os.path.join(blessing.uri, JUDGEMENT), "w") as f:
      f.write(json.dumps(judged, sort_keys=True))
    classes = json.loads(exec_properties.get(CLASSES) or "[]")
    _for_run_page(output_dict, found, judged, blessed, uri, classes)
    if exec_properties.get(IMAGE) and classes:
      _image_samples(input_dict, exec_properties, uri, classes)


@contextlib.contextmanager
def judged_columns_only(input_dict, exec_properties):
  """input_dict with its schema cut to the label and the declared slices'
  features, for as long as the evaluation runs.

  TFMA decodes every column its schema names (without a schema, every
  feature in the data) and converts each, example by example, to carry
  beside the predictions; at 200k rows of 25 features that was 2 s of the
  Evaluator's 14, for columns nothing reads. The model parses the raw
  records itself, so it sees every feature as before.
  """
  rules = exec_properties.get(RULES)
  if not input_dict.get(_SCHEMA) or not rules:
    yield input_dict  # a pipeline built before the rules: all columns
    return
  config = json.loads(exec_properties[standard_component_specs.EVAL_CONFIG_KEY])
  keep = {spec.get("label_key") for spec in config.get("model_specs", [])}
  keep |= {s.feature for s in Evaluation.from_dict(json.loads(rules)).slices}
  schema = io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(
      artifact_utils.get_single_uri(input_dict[_SCHEMA])))
  judged = [f for f in schema.feature if f.name in keep]
  del schema.feature[:]
  schema.feature.extend(judged)
  # Groupings of columns (a curated schema may have them) would name the
  # ones cut; the kept columns are read as plain features.
  for grouping in ("sparse_feature", "weighted_feature", "tensor_representation_group"):
    schema.ClearField(grouping)
  with tempfile.TemporaryDirectory() as folder:
    io_utils.write_pbtxt_file(os.path.join(folder, "schema.pbtxt"), schema)
    cut = standard_artifacts.Schema()
    cut.uri = folder
    yield {**input_dict, _SCHEMA: [cut]}


def _image_samples(input_dict, exec_properties, uri: str, classes) -> None:
  """The report's thumbnails: the candidate's answers on eval images."""
  config = json.loads(exec_properties[standard_component_specs.EVAL_CONFIG_KEY])
  label = config["model_specs"][0]["label_key"]
  splits = json.loads(exec_properties.get(standard_component_specs.EXAMPLE_SPLITS_KEY)
                      or "null") or ["eval"]
  examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
  files = [os.path.join(artifact_utils.get_split_uri([examples], split), "*")
           for split in splits]
  model = artifact_utils.get_single_uri(input_dict[standard_component_specs.MODEL_KEY])
  image_samples.write(uri, path_utils.serving_model_path(model), files,
                      Feature.from_dict(json.loads(exec_properties[IMAGE])), label, classes)


def _for_run_page(output_dict, found: dict, judged: dict, blessed: bool, uri: str,
                  classes) -> None:
  """The metrics and the confusion matrix as the Kubeflow UI draws them
  (components/ui_artifacts.py); outputs a pipeline built before them lacks."""
  for metrics in output_dict.get(METRICS, []):
    for name, value in ui_artifacts.scalar_metrics(found, judged, blessed).items():
      metrics.set_float_custom_property(name, value)
  matrices = evaluation.load_matrices(uri) if classes else {}
  for chart in output_dict.get(CLASSIFICATION, []) if matrices else []:
    if matrices["counts"]:
      chart.set_json_value_custom_property(
          "confusionMatrix", ui_artifacts.confusion_matrix(matrices["counts"], classes))
    points = ui_artifacts.roc_points(matrices["thresholds"])
    if points:
      chart.set_json_value_custom_property("confidenceMetrics", points)


def _judge(found: dict, eval_config_json: str, rules: Optional[Evaluation],
           served: str, tfma_failures: List[str]) -> dict:
  """The judgement (see `judgement`) of the evaluation `found`
  (evaluation.load's); `tfma_failures`: the thresholds TFMA found failed."""
  judged = {"judged_against": served, **evaluation.judged(found, eval_config_json)}
  if not rules:  # a pipeline built before the rules: TFMA alone judges
    return {**judged, "slices": [], "failures": []}
  whole, rows = gate.judge(found, rules, served != serving.NONE)
  counted = [] if gate.waives_tfma(whole) else tfma_failures
  return {**judged, "whole": whole, "slices": rows,
          "failures": counted + gate.failures(whole, rows)}


def _set_blessed(blessing, blessed: bool) -> None:
  """Turns TFMA's blessing into the gate's verdict, as TFX writes one."""
  drop, keep = ((constants.NOT_BLESSED_FILE_NAME, constants.BLESSED_FILE_NAME) if blessed
                else (constants.BLESSED_FILE_NAME, constants.NOT_BLESSED_FILE_NAME))
  if fileio.exists(os.path.join(blessing.uri, drop)):
    fileio.remove(os.path.join(blessing.uri, drop))
  with fileio.open(os.path.join(blessing.uri, keep), "w") as f:
    f.write("")
  blessing.set_int_custom_property(
      constants.ARTIFACT_PROPERTY_BLESSED_KEY,
      constants.BLESSED_VALUE if blessed else constants.NOT_BLESSED_VALUE)


def judgement(blessing_uri: str) -> Optional[dict]:
  """What a blessing was judged on: `judged_against` (a version folder's
  name, or `serving.NONE`), `metric`, `value`, `baseline_value`, `change`
  with `change_low` and `change_high` (its 95% interval), `whole` and
  `slices` (components/evaluator/gate.py's rows) and `failures` (every refusal, TFMA's
  included; evaluation.counted_failures reads older judgements); None for a
  blessing that does not say."""
  path = os.path.join(blessing_uri, JUDGEMENT)
  if not fileio.exists(path):
    return None
  with fileio.open(path) as f:
    return json.loads(f.read())


class EvaluatorSpec(standard_component_specs.EvaluatorSpec):
  """TFX's Evaluator's, with the slices' rules, the label's class names and
  the run page's outputs."""
  PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                RULES: ExecutionParameter(type=str, optional=True),
                CLASSES: ExecutionParameter(type=str, optional=True),
                IMAGE: ExecutionParameter(type=str, optional=True)}
  OUTPUTS = {**standard_component_specs.EvaluatorSpec.OUTPUTS,
             METRICS: ChannelParameter(type=ui_artifacts.Metrics),
             CLASSIFICATION: ChannelParameter(type=ui_artifacts.ClassificationMetrics)}


class Evaluator(evaluator_component.Evaluator):
  """TFX's Evaluator, running the executor above."""
  SPEC_CLASS = EvaluatorSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, examples, model, baseline_model, eval_config, rules: Evaluation,
               classes: Sequence[str], schema=None, image: Optional[Feature] = None):
    # Not TFX's constructor: it builds its own spec, without the slices' rules.
    spec = EvaluatorSpec(
        examples=examples, model=model, baseline_model=baseline_model,
        eval_config=eval_config, schema=schema, classes=json.dumps(list(classes)),
        evaluation_rules=json.dumps(dataclasses.asdict(rules), sort_keys=True),
        # Without its backbone: a weights file's path changes no thumbnail.
        image_feature=json.dumps(dataclasses.asdict(dataclasses.replace(
            image, image=dataclasses.replace(image.image, backbone=None))),
            sort_keys=True) if image else None,
        evaluation=Channel(type=standard_artifacts.ModelEvaluation),
        blessing=Channel(type=standard_artifacts.ModelBlessing),
        **{METRICS: Channel(type=ui_artifacts.Metrics),
           CLASSIFICATION: Channel(type=ui_artifacts.ClassificationMetrics)})
    base_component.BaseComponent.__init__(self, spec=spec)

"""The Pusher's executor: TFX's, but a model already in the serving dir is not pushed again.

Pushes are atomic (serving.push). The Evaluator re-blesses an unchanged model whenever its baseline changes
(after the first blessing, the model is its own baseline), and TFX's Pusher
then copies the same model into a new version folder. TF Serving would reload
it for nothing. This executor finds the identical SavedModel by its
`fingerprint.pb` and records that version instead of copying. Earlier
versions are never overwritten or deleted. A version it pushes holds the
Evaluator's judgement beside it (serving.BLESSED), with the run that pushed
it.

A push is judged against the model served when it lands. Two runs may
overlap (a manual run beside a scheduled one, kubeflow/pipelines#7261): if
another push came in after this run's Evaluator judged the candidate
against the version then served, the candidate was never compared with the
model it would replace, and it is not pushed; the run says so in one line
(`REFUSED`, read by store/metadata/outcome.py) and the next run judges against the
new version. What remains is the moment between this check and the copy,
seconds long, that no object store lets a writer lock.
"""

import json
import os
import time
from typing import Optional

from absl import logging
from tfx.components.pusher import component as pusher_component
from tfx.components.pusher import executor
from tfx.dsl.components.base import base_component, executor_spec
from tfx.dsl.io import fileio
from tfx.types import Channel, artifact_utils, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter, ExecutionParameter

import serving
from components import ui_artifacts
from components.evaluator.evaluator import judgement
from components.pusher import REFUSED, model_card  # REFUSED: a PushedModel's property
from components.serving_check import check
from components.tuner import record

MODEL_CARD = "model_card"  # the card again, for the run page (ui_artifacts)
SERVING_DIR = "serving_dir"
CARD = "card"  # the pipeline's name and the training settings, as JSON
SCHEDULED_BY = "scheduled_by"
STATISTICS, DRIFT, HYPERPARAMETERS = "statistics", "drift", "hyperparameters"
INFRA = standard_component_specs.INFRA_BLESSING_KEY
MODEL = standard_component_specs.MODEL_KEY
BLESSING = standard_component_specs.MODEL_BLESSING_KEY


class Executor(executor.Executor):
  """Pushes a blessed model, atomically, unless the serving dir already holds it."""

  def Do(self, input_dict, output_dict, exec_properties):
    model_push = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.PUSHED_MODEL_KEY])
    if not self.CheckBlessing(input_dict):
      self._MarkNotPushed(model_push)
      _page_card(output_dict, "Nothing was pushed: the model was not blessed, by the "
                 "Evaluator or by the serving check.")
      return
    model_path = self.GetModelPath(input_dict)
    base = exec_properties[SERVING_DIR]
    existing = serving.find_copy(model_path, base)
    [blessing] = input_dict[standard_component_specs.MODEL_BLESSING_KEY]
    judged = judgement(blessing.uri)
    refused = None if existing else landing_check(judged, model_path, base)
    if refused:
      logging.warning("Not pushed: %s", refused)
      self._MarkNotPushed(model_push)
      model_push.set_string_custom_property(REFUSED, refused)
      _page_card(output_dict, f"Nothing was pushed: {refused}.")
      return
    if existing:
      logging.info("Model already pushed to %s; not copying it again.", existing)
      target = existing
      card_file = os.path.join(existing, serving.CARD)
      _page_card(output_dict, _read(card_file) if fileio.exists(card_file) else
                 f"This model is already served as {existing}, pushed before model "
                 "cards were written.")
    else:
      run_id = (self._context and self._context.pipeline_run_id) or ""
      blessed = {**(judged or {}), "pushed_unix": int(time.time()), "pipeline_run": run_id}
      title, parts = card(input_dict, exec_properties, judged, model_path, run_id)
      text = model_card.markdown(title, parts)
      target = serving.push(model_path, base, extra={
          serving.BLESSED: json.dumps(blessed, sort_keys=True), serving.CARD: text,
          serving.CARD_HTML: model_card.to_html(title, parts)})
      _page_card(output_dict, text)
      logging.info("Model pushed to %s.", target)
    self._MarkPushed(model_push, pushed_destination=target,
                     pushed_version=os.path.basename(target))


def _read(path: str) -> str:
  with fileio.open(path) as f:
    return f.read()


def _page_card(output_dict, text: str) -> None:
  """The model card, or why there is none, for the run page (a
  `system.Markdown` artifact); not for a pipeline built before it."""
  for page in output_dict.get(MODEL_CARD, []):
    page.write(text)


def landing_check(judged, model_path: str, base: str):
  """Why the candidate must not land now (one line), or None: the version
  it was judged against (`judged`, the Evaluator's judgement) is no longer
  the one it would replace."""
  judged = (judged or {}).get("judged_against")
  # The same choice as the run's baseline: versions trained with this
  # candidate's own training key do not count (serving.baseline_version).
  now = serving.baseline_version(base, serving.recorded_key(model_path))
  if judged is None or judged == now:
    return None
  def named(version):
    return "no served model" if version == serving.NONE else f"version {version}"
  return (f"the served model changed after the Evaluator judged this candidate: judged "
          f"against {named(judged)}, {named(now)} served now in {base} (another run pushed "
          f"in between); run again to judge it against the model served now")


def card(input_dict, exec_properties, judged: Optional[dict], model_path: str,
         run_id: str):
  """The model card's title and sections (components/pusher/model_card.py)."""
  about = json.loads(exec_properties.get(CARD) or "{}")
  single = {key: (input_dict.get(key) or [None])[0]
            for key in (STATISTICS, DRIFT, HYPERPARAMETERS, INFRA, MODEL, BLESSING)}
  served = (judged or {}).get("judged_against", serving.NONE)
  settings = dict(about.get("settings", {}))
  if single[HYPERPARAMETERS] is not None:
    with fileio.open(os.path.join(single[HYPERPARAMETERS].uri, record.BEST)) as f:
      settings["tuned"] = json.loads(f.read()).get("values", {})
  result_file = single[INFRA] and os.path.join(single[INFRA].uri, check.RESULT_FILE)
  serving_line = "not checked"
  if result_file and fileio.exists(result_file):
    with fileio.open(result_file) as f:
      serving_line = check.describe(json.loads(f.read()))
  drift = json.loads(single[DRIFT].read()) if single[DRIFT] is not None else None
  sections = model_card.sections(
      about={"pipeline": about.get("pipeline", ""), "pipeline run": run_id or "(not known)",
             "pushed": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
             "started by": exec_properties.get(SCHEDULED_BY) or "(not known)",
             "replaces": "nothing: no model was served" if served == serving.NONE
             else f"version {served}"},
      trained_on=serving.trained_on(model_path) or [], statistics=single[STATISTICS],
      settings=settings, judged=judged, serving_line=serving_line, drift=drift,
      lineage={key: str(artifact.id) for key, artifact in single.items()
               if artifact is not None and artifact.id})
  return f"Model card: {about.get('pipeline', 'model')}", sections


class PusherSpec(standard_component_specs.PusherSpec):
  """TFX's Pusher's, taking the serving dir as the plain string that every
  other step takes it as (a PushDestination would be one more form of it),
  and what the model card tells beyond the model and its blessings."""
  PARAMETERS = {SERVING_DIR: ExecutionParameter(type=str),
                CARD: ExecutionParameter(type=str, optional=True),
                SCHEDULED_BY: ExecutionParameter(type=str, optional=True)}
  INPUTS = {**standard_component_specs.PusherSpec.INPUTS,
            STATISTICS: ChannelParameter(type=standard_artifacts.ExampleStatistics,
                                         optional=True),
            DRIFT: ChannelParameter(type=standard_artifacts.String, optional=True),
            HYPERPARAMETERS: ChannelParameter(type=standard_artifacts.HyperParameters,
                                              optional=True)}
  OUTPUTS = {**standard_component_specs.PusherSpec.OUTPUTS,
             MODEL_CARD: ChannelParameter(type=ui_artifacts.Markdown)}


class Pusher(pusher_component.Pusher):
  """TFX's Pusher, running the executor above, into the serving dir
  `serving_dir` (a string, or a runtime parameter holding one)."""
  SPEC_CLASS = PusherSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

  def __init__(self, model, model_blessing, infra_blessing, serving_dir, card: dict,
               scheduled_by, statistics=None, drift=None, hyperparameters=None):
    # Not TFX's constructor: it builds its own spec, with a PushDestination.
    spec = PusherSpec(model=model, model_blessing=model_blessing,
                      infra_blessing=infra_blessing, serving_dir=serving_dir,
                      card=json.dumps(card, sort_keys=True), scheduled_by=scheduled_by,
                      statistics=statistics, drift=drift, hyperparameters=hyperparameters,
                      pushed_model=Channel(type=standard_artifacts.PushedModel),
                      model_card=Channel(type=ui_artifacts.Markdown))
    base_component.BaseComponent.__init__(self, spec=spec)

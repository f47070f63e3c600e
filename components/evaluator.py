"""The Evaluator's executor: TFX's, with an empty baseline taken as none,
and a judgement that says what it judged.

BaselineModel always outputs a Model artifact (a container step cannot
output nothing); before the first push it holds no model. TFX's Evaluator
would try to load it. Here such a baseline is dropped, so the first model is
judged by the value threshold alone, as TFX does when no baseline exists.

The blessing also records its judgement (`JUDGEMENT`): which served version
the candidate was judged against, and the judged metric's value for both.
Another run may push between this judgement and this run's push, and the
Pusher then refuses (components/pusher.py); a version it pushes keeps the
judgement beside it (serving.BLESSED), which `python -m serving versions`
reads without ML Metadata.
"""

import json
import os
from typing import Optional

from tfx.components.evaluator import component as evaluator_component
from tfx.components.evaluator import executor
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs

import serving
from components import evaluation
from components.baseline import has_model, served_source
from components.local_beam import NoPrism

_BASELINE = standard_component_specs.BASELINE_MODEL_KEY
JUDGEMENT = "judgement.json"  # in the blessing's folder


class Executor(NoPrism, executor.Executor):
  """Evaluates the candidate; against the baseline only if there is one."""

  def Do(self, input_dict, output_dict, exec_properties):
    baseline = input_dict.get(_BASELINE)
    if baseline and not all(map(has_model, baseline)):
      input_dict = {k: v for k, v in input_dict.items() if k != _BASELINE}
    super().Do(input_dict, output_dict, exec_properties)
    sources = [served_source(a) for a in baseline or ()]
    judged = {"judged_against": (os.path.basename(sources[0]) if sources and sources[0]
                                 else serving.NONE),
              **evaluation.judged(
                  artifact_utils.get_single_uri(
                      output_dict[standard_component_specs.EVALUATION_KEY]),
                  exec_properties[standard_component_specs.EVAL_CONFIG_KEY])}
    blessing_uri = artifact_utils.get_single_uri(
        output_dict[standard_component_specs.BLESSING_KEY])
    fileio.makedirs(blessing_uri)
    with fileio.open(os.path.join(blessing_uri, JUDGEMENT), "w") as f:
      f.write(json.dumps(judged, sort_keys=True))


def judgement(blessing_uri: str) -> Optional[dict]:
  """What a blessing was judged on: `judged_against` (a version folder's
  name, or `serving.NONE`), `metric`, `value`, `baseline_value`; None for a
  blessing that does not say."""
  path = os.path.join(blessing_uri, JUDGEMENT)
  if not fileio.exists(path):
    return None
  with fileio.open(path) as f:
    return json.loads(f.read())


class Evaluator(evaluator_component.Evaluator):
  """TFX's Evaluator, running the executor above."""
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

"""The Evaluator's executor: TFX's, with an empty baseline taken as none.

BaselineModel always outputs a Model artifact (a container step cannot
output nothing); before the first push it holds no model. TFX's Evaluator
would try to load it. Here such a baseline is dropped, so the first model is
judged by the value threshold alone, as TFX does when no baseline exists.

The blessing also records which served version the candidate was judged
against (components/baseline.py `record_judged`): another run may push
between this judgement and this run's push, and the Pusher then refuses.
"""

from tfx.components.evaluator import component as evaluator_component
from tfx.components.evaluator import executor
from tfx.dsl.components.base import executor_spec
from tfx.types import artifact_utils, standard_component_specs

from components.baseline import has_model, record_judged
from components.local_beam import NoPrism

_BASELINE = standard_component_specs.BASELINE_MODEL_KEY


class Executor(NoPrism, executor.Executor):
  """Evaluates the candidate; against the baseline only if there is one."""

  def Do(self, input_dict, output_dict, exec_properties):
    baseline = input_dict.get(_BASELINE)
    if baseline and not all(map(has_model, baseline)):
      input_dict = {k: v for k, v in input_dict.items() if k != _BASELINE}
    super().Do(input_dict, output_dict, exec_properties)
    record_judged(artifact_utils.get_single_uri(
        output_dict[standard_component_specs.BLESSING_KEY]), baseline)


class Evaluator(evaluator_component.Evaluator):
  """TFX's Evaluator, running the executor above."""
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

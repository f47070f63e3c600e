"""The Evaluator's configuration: always explicit thresholds.

Without thresholds TFMA never blesses a model, silently (TFX issue #5148).
Here a model is blessed only when its eval accuracy clears `min_accuracy`
and, once a blessed model exists, it is at most `max_accuracy_drop` below the
latest blessed model.
"""

import tensorflow_model_analysis as tfma

from pipeline.config import PipelineConfig
from trainer.export import OUTPUT_KEY, SIGNATURE

METRIC = "sparse_categorical_accuracy"


def eval_config(config: PipelineConfig) -> tfma.EvalConfig:
  """The EvalConfig for the candidate model and the baseline."""
  threshold = tfma.MetricThreshold(
      value_threshold=tfma.GenericValueThreshold(
          lower_bound={"value": config.min_accuracy}),
      change_threshold=tfma.GenericChangeThreshold(
          direction=tfma.MetricDirection.HIGHER_IS_BETTER,
          absolute={"value": -config.max_accuracy_drop - 1e-10}))
  return tfma.EvalConfig(
      model_specs=[tfma.ModelSpec(
          signature_name=SIGNATURE, prediction_key=OUTPUT_KEY,
          label_key=config.declaration.label.name)],
      # Overall, and per label class for the report (debug/report).
      slicing_specs=[tfma.SlicingSpec(),
                     tfma.SlicingSpec(feature_keys=[config.declaration.label.name])],
      metrics_specs=[tfma.MetricsSpec(metrics=[
          tfma.MetricConfig(class_name="ExampleCount"),
          # The thresholds bless on the overall slice only: a plain
          # `threshold` would apply to every class's slice too.
          tfma.MetricConfig(class_name="SparseCategoricalAccuracy",
                            per_slice_thresholds=[tfma.PerSliceMetricThreshold(
                                slicing_specs=[tfma.SlicingSpec()],
                                threshold=threshold)]),
      ])])

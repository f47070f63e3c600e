"""The Evaluator's configuration: always explicit thresholds.

Without thresholds TFMA never blesses a model, silently (TFX issue #5148).
Here a model is blessed only when its blessing metric (the declaration's
`evaluation:`; accuracy for classes, rmse for regression by default) clears
its threshold and, once a blessed model exists, is at most `max_change`
worse than the latest blessed model's. The other metrics of the label's kind
are computed for the report: accuracy (and AUC with two classes), or RMSE
and MAE.
"""

import tensorflow_model_analysis as tfma

from dataset import metrics as known_metrics
from dataset.declaration import Declaration, Evaluation
from dataset.thresholds import Slice
from trainer.export import EXAMPLES_SIGNATURE, prediction_key

ROC_POINTS = 50  # thresholds on the ROC curve the run page draws


def _threshold(evaluation) -> tfma.MetricThreshold:
  if evaluation.max_change_on == "interval":
    # The change is judged on its interval by the Evaluator's executor
    # (components/evaluator/evaluator.py): TFMA's thresholds read the estimate only.
    bound = "lower_bound" if evaluation.higher_is_better else "upper_bound"
    return tfma.MetricThreshold(value_threshold=tfma.GenericValueThreshold(
        **{bound: {"value": evaluation.threshold}}))
  if evaluation.higher_is_better:
    return tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(
            lower_bound={"value": evaluation.threshold}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER,
            absolute={"value": -evaluation.max_change - 1e-10}))
  return tfma.MetricThreshold(
      value_threshold=tfma.GenericValueThreshold(
          upper_bound={"value": evaluation.threshold}),
      change_threshold=tfma.GenericChangeThreshold(
          direction=tfma.MetricDirection.LOWER_IS_BETTER,
          absolute={"value": evaluation.max_change + 1e-10}))


def slicing_spec(declared: Slice) -> tfma.SlicingSpec:
  """A categorical feature's slices are its values; a numeric one's, its
  buckets, named as Slice.bucket_names says (SQL over the parsed examples)."""
  if not declared.buckets:
    return tfma.SlicingSpec(feature_keys=[declared.feature])
  name = declared.feature
  cases = " ".join(f"WHEN {name} < {edge!r} THEN '{bucket}'" for edge, bucket in
                   zip(declared.buckets, declared.bucket_names()))
  return tfma.SlicingSpec(slice_keys_sql=(
      f"SELECT STRUCT(CASE {cases} ELSE '{declared.bucket_names()[-1]}' END AS {name}) "
      f"FROM example.{name}"))


def eval_config(declaration: Declaration, evaluation: Evaluation) -> tfma.EvalConfig:
  """The EvalConfig for the candidate model and the baseline, judged by
  `evaluation` (the declaration's, with the run's overrides)."""
  label = declaration.label
  metrics = known_metrics.for_label(label.kind)
  if label.kind == "classes" and label.num_classes != 2:
    metrics = {k: v for k, v in metrics.items() if k != "auc"}
  # The thresholds bless on the overall slice only: a plain `threshold`
  # would apply to every class's slice too.
  def metric(name: str, class_name: str) -> tfma.MetricConfig:
    if name != evaluation.metric:
      return tfma.MetricConfig(class_name=class_name)
    return tfma.MetricConfig(class_name=class_name, per_slice_thresholds=[
        tfma.PerSliceMetricThreshold(slicing_specs=[tfma.SlicingSpec()],
                                     threshold=_threshold(evaluation))])

  # With classes, the confusion matrix: the report's per-class numbers and
  # the Kubeflow run page's matrix (components/ui_artifacts.py). One plot
  # rather than a slice per class: 13.2 s against 14.0 s at 200k rows.
  plots = [tfma.MetricConfig(class_name="MultiClassConfusionMatrixPlot")] * (
      label.kind == "classes")
  specs = [tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name="ExampleCount")] + [
      metric(name, m.class_name) for name, m in metrics.items() if name != "auc"] + plots)]
  if "auc" in metrics:
    # AUC needs one score per example: class 1's probability, against label 1;
    # so does the ROC curve's matrix at each threshold.
    specs.append(tfma.MetricsSpec(
        metrics=[metric("auc", "AUC"), tfma.MetricConfig(
            class_name="ConfusionMatrixPlot", config='{"num_thresholds": %d}' % ROC_POINTS)],
        binarize=tfma.BinarizationOptions(class_ids={"values": [1]})))
  slices = [tfma.SlicingSpec()]
  # The declared slices, judged by the Evaluator's executor
  # (components/evaluator/evaluator.py says why not by TFMA's per-slice thresholds).
  slices += [slicing_spec(s) for s in evaluation.slices]
  return tfma.EvalConfig(
      # A SavedModel's signature, not a Keras model: TFMA would otherwise load
      # each model as Keras twice (once only to learn that it is one), 0.6 s
      # of the Evaluator at 5k rows, to call the same signature.
      model_specs=[tfma.ModelSpec(
          signature_name=EXAMPLES_SIGNATURE, prediction_key=prediction_key(declaration),
          label_key=label.name, model_type=tfma.constants.TF_GENERIC)],
      slicing_specs=slices, metrics_specs=specs,
      # Not the model's compiled metrics and loss as well: the metrics above
      # are the ones judged and shown, and computing the compiled ones over
      # again (in TF, per batch and per slice) took a quarter of the
      # Evaluator's time on T (26.8 s against 19.7 s; bench/e2e_bench.py).
      # With each metric, its 95% interval: the candidate's, and the paired
      # change's against the served model (same examples, same jackknife
      # partitions), for the run line, the report and `max_change_on`.
      options=tfma.Options(
          include_default_metrics={"value": False},
          compute_confidence_intervals={"value": True},
          confidence_intervals=tfma.ConfidenceIntervalOptions(
              method=tfma.ConfidenceIntervalOptions.JACKKNIFE)))

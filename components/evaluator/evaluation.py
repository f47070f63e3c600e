"""The Evaluator's numbers: overall and per label class, against the baseline.

Read from the Evaluator's output with TFMA's own loaders; the thresholds
from the eval_config the Evaluator ran with, as ML Metadata recorded it.
The Evaluator's step reads its own (`judged`) to record its judgement in
the blessing; the run's outcome, the report and the notice read them after.
"""

import json
from typing import Dict, List, Optional

import tensorflow_model_analysis as tfma

from dataset import metrics


def load(uri: str) -> Dict[tuple, Dict[str, Dict[str, float]]]:
  """slice -> model ("candidate"/"baseline"/"change") -> metric -> value.

  The overall slice is (); a per-class slice is (("label", 3),). Where TFMA
  computed a 95% interval, "<model> interval" -> metric -> (lower, upper).
  """
  found: Dict[tuple, Dict[str, Dict[str, float]]] = {}
  for per_slice in tfma.load_metrics(uri):
    key = tuple((k.column, _value(k)) for k in per_slice.slice_key.single_slice_keys)
    per_model = found.setdefault(key, {})
    for kv in per_slice.metric_keys_and_values:
      model = ("change" if kv.key.is_diff
               else "baseline" if kv.key.model_name == "baseline" else "candidate")
      if kv.value.HasField("double_value"):
        per_model.setdefault(model, {})[kv.key.name] = kv.value.double_value.value
      interval = kv.confidence_interval
      if interval.HasField("lower_bound") and interval.lower_bound.HasField("double_value"):
        per_model.setdefault(f"{model} interval", {})[kv.key.name] = (
            interval.lower_bound.double_value.value, interval.upper_bound.double_value.value)
  return found


def load_matrices(uri: str) -> dict:
  """The whole eval split's confusion matrices, as TFMA's plots have them
  (`components/evaluator/eval_config.py` asks for them with class labels):
  `counts`: (true class id, predicted class id) -> examples, the
  candidate's, at TFMA's default threshold 0 (the predicted class is the
  most probable); `thresholds`: for two classes, class 1's matrix at each
  threshold as {threshold, tp, fp, tn, fn}. Empty for a regression label.
  """
  found = {"counts": {}, "thresholds": []}
  for per_slice in tfma.load_plots(uri):
    if per_slice.slice_key.single_slice_keys:
      continue
    for kv in per_slice.plot_keys_and_values:
      if kv.key.model_name == "baseline":
        continue
      for matrix in kv.value.multi_class_confusion_matrix_at_thresholds.matrices[:1]:
        for e in matrix.entries:
          found["counts"][(e.actual_class_id, e.predicted_class_id)] = e.num_weighted_examples
      found["thresholds"] += [
          {"threshold": m.threshold, "tp": m.true_positives, "fp": m.false_positives,
           "tn": m.true_negatives, "fn": m.false_negatives}
          for m in kv.value.confusion_matrix_at_thresholds.matrices]
  return found


def per_class(counts: dict, classes) -> List[list]:
  """[class, examples, recall, precision] per class from `load_matrices`'
  counts: the report's per-class table. Recall is the accuracy on the
  class's own examples."""
  rows = []
  for i, name in enumerate(classes):
    examples = sum(n for (true, _), n in counts.items() if true == i)
    predicted = sum(n for (_, pred), n in counts.items() if pred == i)
    right = counts.get((i, i), 0.0)
    rows.append([name, examples, right / examples if examples else None,
                 right / predicted if predicted else None])
  return rows


def _value(single_slice_key):
  kind = single_slice_key.WhichOneof("kind")
  value = getattr(single_slice_key, kind)
  return value.decode() if isinstance(value, bytes) else value


def failures(uri: str) -> List[str]:
  """One line per failed threshold, as TFMA's validation result has them."""
  lines = []
  for per_slice in tfma.load_validation_result(uri).metric_validations_per_slice:
    for failure in per_slice.failures:
      kind = "change against the baseline" if failure.metric_key.is_diff else "value"
      threshold = " ".join(str(failure.metric_threshold).split())
      lines.append(f"{failure.metric_key.name} {kind} "
                   f"{failure.metric_value.double_value.value:.4f} fails its "
                   f"threshold {threshold}")
  return lines


def without_intervals(eval_config_json: str) -> str:
  """The eval_config (JSON, as the Evaluator takes it) without its 95%
  confidence intervals."""
  config = json.loads(eval_config_json)
  options = config.get("options", {})
  for key in ("compute_confidence_intervals", "confidence_intervals"):
    options.pop(key, None)
  return json.dumps(config, sort_keys=True)


def with_baseline_signature(eval_config_json: str, signature: str) -> str:
  """The eval_config with the baseline's ModelSpec written out, calling
  `signature`: a baseline pushed before `serving_examples` existed takes
  Examples by `serving_default`. The same two specs TFMA would add
  (`update_eval_config_with_defaults`: the candidate's copied, named
  "candidate" and "baseline"), so the rest of the run reads them as before."""
  config = json.loads(eval_config_json)
  (candidate,) = config["model_specs"]
  baseline = {**candidate, "name": "baseline", "is_baseline": True,
              "signature_name": signature}
  config["model_specs"] = [{**candidate, "name": "candidate"}, baseline]
  return json.dumps(config, sort_keys=True)


def thresholds(eval_config_json: Optional[str]) -> Dict[str, str]:
  """metric -> its thresholds in words, from the Evaluator's eval_config."""
  if not eval_config_json:
    return {}
  config = json.loads(eval_config_json)
  found = {}
  for spec in config.get("metrics_specs", []):
    for metric in spec.get("metrics", []):
      settings = [metric.get("threshold")] + [
          p.get("threshold") for p in metric.get("per_slice_thresholds", [])]
      words = []
      for threshold in filter(None, settings):
        value = threshold.get("value_threshold", {})
        if "lower_bound" in value:
          words.append(f">= {value['lower_bound']}")
        if "upper_bound" in value:
          words.append(f"<= {value['upper_bound']}")
        change = threshold.get("change_threshold")
        if change and "absolute" in change:
          words.append(f"change against the baseline >= {change['absolute']:.4g}"
                       if change.get("direction") == "HIGHER_IS_BETTER" else
                       f"change against the baseline <= {change['absolute']:.4g}")
      if words:
        found[metric["class_name"]] = "; ".join(words)
  return found


def judged(found: Dict[tuple, Dict[str, Dict[str, float]]],
           eval_config_json: str) -> Dict[str, Optional[float]]:
  """The thresholded metric on the whole eval split (`found`, `load`'s):
  {"metric": its name,
  "value": the candidate's, "baseline_value": the served model's, "change"
  (candidate minus served, example by example on the same examples) with
  its 95% interval "change_low" to "change_high"; the served model's and
  the change's are None when there was none to compare with}."""
  metric = metrics.blessing(eval_config_json)
  overall = found.get((), {})
  low, high = overall.get("change interval", {}).get(metric.tfma_key, (None, None))
  return {"metric": metric.name,
          "value": overall.get("candidate", {}).get(metric.tfma_key),
          "baseline_value": overall.get("baseline", {}).get(metric.tfma_key),
          "change": overall.get("change", {}).get(metric.tfma_key),
          "change_low": low, "change_high": high}


def counted_failures(judged: dict, evaluation_uri: str) -> List[str]:
  """Every failure that refused the model: the judgement's own list, which
  holds TFMA's too since the gate judged small rows (its `whole`); for an
  older judgement, TFMA's from its validation result, then the judgement's."""
  if "whole" in judged:
    return list(judged.get("failures", []))
  return failures(evaluation_uri) + list(judged.get("failures", []))

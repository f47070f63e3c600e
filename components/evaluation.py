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

  The overall slice is (); a per-class slice is (("label", 3),).
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
  return found


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


def judged(uri: str, eval_config_json: str) -> Dict[str, Optional[float]]:
  """The thresholded metric on the whole eval split: {"metric": its name,
  "value": the candidate's, "baseline_value": the served model's, or None
  when there was none to compare with}."""
  metric = metrics.blessing(eval_config_json)
  overall = load(uri).get((), {})
  return {"metric": metric.name,
          "value": overall.get("candidate", {}).get(metric.tfma_key),
          "baseline_value": overall.get("baseline", {}).get(metric.tfma_key)}

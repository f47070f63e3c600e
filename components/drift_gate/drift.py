"""Drift between the newest span and the span before it, measured by TFDV.

TFX's ExampleValidator never passes previous statistics to
`tfdv.validate_statistics`, so a schema's drift comparators are silently
ignored there. Here they are set from the declaration's `drift:` on a copy
of the schema, one per declared feature (L-infinity distance for a
categorical feature, Jensen-Shannon divergence for a numeric or sequence
one; image bytes have no distribution to compare), plus the dataset size,
and TFDV compares the two spans' statistics. Its `drift_skew_info` gives
each feature's measure, drifted or not, which the run's verdict and report
show against the thresholds.
"""

import dataclasses
import json
from typing import Dict, List, Tuple

import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2

from dataset.thresholds import Drift, drift_from_dict
from dataset.types import Declaration

SIZE = "(number of examples)"
MEASURES = {"L_INFTY": "L-infinity distance",
            "JENSEN_SHANNON_DIVERGENCE": "Jensen-Shannon divergence"}


@dataclasses.dataclass(frozen=True)
class Measured:
  """One feature's (or the size's) change between the two spans."""
  feature: str
  measure: str
  value: float
  threshold: float

  @property
  def drifted(self) -> bool:
    return self.value > self.threshold

  def line(self) -> str:
    verdict = "above" if self.drifted else "within"
    return (f"feature '{self.feature}': {self.measure} {self.value:.4f} {verdict} "
            f"its threshold {self.threshold:g}")


def rules_json(decl: Declaration) -> str:
  """What the drift check needs of the declaration: the features' kinds (no
  image: its bytes have no distribution to compare) and `drift:`."""
  return json.dumps({"kinds": {f.name: f.kind for f in decl.features if f.kind != "image"},
                     "drift": dataclasses.asdict(decl.drift)}, sort_keys=True)


def rules_from_json(text: str) -> Tuple[Dict[str, str], Drift]:
  loaded = json.loads(text)
  return loaded["kinds"], drift_from_dict(loaded["drift"])


def drift_schema(schema: schema_pb2.Schema, kinds: Dict[str, str],
                 rules: Drift, comparator: str = "drift_comparator") -> schema_pb2.Schema:
  """A copy of the schema with the declaration's comparators on it (drift
  between spans, or skew between training and serving)."""
  found = schema_pb2.Schema()
  found.CopyFrom(schema)
  for feature in found.feature:
    if feature.name not in kinds:
      continue
    threshold = rules.threshold(feature.name, kinds[feature.name])
    if kinds[feature.name] == "categorical":
      getattr(feature, comparator).infinity_norm.threshold = threshold
    else:
      getattr(feature, comparator).jensen_shannon_divergence.threshold = threshold
  return found


def _size(current: statistics_pb2.DatasetFeatureStatisticsList,
          previous: statistics_pb2.DatasetFeatureStatisticsList, bound: float) -> Measured:
  now, before = current.datasets[0].num_examples, previous.datasets[0].num_examples
  change = abs(now - before) / before if before else float("inf")
  return Measured(SIZE, f"relative change ({before} to {now} examples)", change, bound)


def compare(current: statistics_pb2.DatasetFeatureStatisticsList,
            previous: statistics_pb2.DatasetFeatureStatisticsList,
            schema: schema_pb2.Schema, kinds: Dict[str, str],
            rules: Drift) -> List[Measured]:
  """Each declared feature's drift, then the size's; drifted or not."""
  anomalies = tfdv.validate_statistics(current, drift_schema(schema, kinds, rules),
                                       previous_statistics=previous)
  return _measured(anomalies, "drift_measurements") + [_size(current, previous, rules.size)]


def skew(training: statistics_pb2.DatasetFeatureStatisticsList,
         served: statistics_pb2.DatasetFeatureStatisticsList,
         schema: schema_pb2.Schema, kinds: Dict[str, str], rules: Drift) -> List[Measured]:
  """Each declared feature's skew between training and served examples, by
  the same measures and thresholds as drift (TFDV's skew comparators)."""
  anomalies = tfdv.validate_statistics(
      training, drift_schema(schema, kinds, rules, "skew_comparator"),
      serving_statistics=served)
  return _measured(anomalies, "skew_measurements")


def _measured(anomalies: anomalies_pb2.Anomalies, field: str) -> List[Measured]:
  found = []
  for info in anomalies.drift_skew_info:
    name = ".".join(info.path.step)
    for m in getattr(info, field):
      kind = anomalies_pb2.DriftSkewInfo.Measurement.Type.Name(m.type)
      found.append(Measured(name, MEASURES.get(kind, kind), m.value, m.threshold))
  return sorted(found, key=lambda m: m.feature)


def _feature(stats: statistics_pb2.DatasetFeatureStatisticsList, name: str):
  for feature in stats.datasets[0].features:
    if ".".join(feature.path.step) == name:
      return feature
  return None


def _shares(feature) -> List[Tuple[str, float]]:
  """(bucket or value, share of the values): a numeric feature's standard
  histogram, or a categorical one's most frequent values."""
  if feature is None:
    return []
  if feature.HasField("num_stats"):
    for histogram in feature.num_stats.histograms:
      if histogram.type == statistics_pb2.Histogram.STANDARD:
        total = sum(b.sample_count for b in histogram.buckets) or 1
        return [(f"{b.low_value:.3g}..{b.high_value:.3g}", b.sample_count / total)
                for b in histogram.buckets]
  buckets = feature.string_stats.rank_histogram.buckets
  total = sum(b.sample_count for b in buckets) or 1
  return [(b.label, b.sample_count / total) for b in buckets[:20]]


def distributions(current, previous, names) -> Dict[str, Dict[str, list]]:
  """feature -> {"current": shares, "previous": shares}, for the report's
  side-by-side view of the drifted features."""
  return {name: {"current": _shares(_feature(current, name)),
                 "previous": _shares(_feature(previous, name))}
          for name in names if name != SIZE}

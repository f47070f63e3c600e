"""`python -m commands.debug skew --examples FILE`: training/serving skew.

A model server's request log, as TFRecords of `tf.train.Example` with the
raw features `serving_examples` takes (plain or GZIP, any path TensorFlow
opens), against the training statistics of a local run: the newest training
split its StatisticsGen described. Each declared feature is measured as
drift is (components/drift_gate/drift.py: L-infinity distance for a categorical
feature, Jensen-Shannon divergence for a numeric or sequence one, images
aside), by TFDV's skew comparators, against the declaration's `drift:`
thresholds as that run's DriftGate applied them, or their defaults. A
declared feature that no request carries is skewed too.
"""

import math
import os
import tempfile
from typing import List, Tuple

import tensorflow as tf
import tensorflow_data_validation as tfdv
from tfx.utils import io_utils

from components.drift_gate import drift
from dataset import spans
from dataset.records.format import BadRecord, read_records
from store.metadata import store as st


def _requests(path: str, folder: str) -> Tuple[str, int]:
  """The file's records, checked as Examples, as a plain TFRecord file in
  folder; and how many there are."""
  if not tf.io.gfile.exists(path):
    raise st.StoreError(f"--examples: no file at {path}")
  copy, count = os.path.join(folder, "requests.tfrecord"), 0
  try:
    with tf.io.TFRecordWriter(copy) as writer:
      for record in read_records(path, opener=tf.io.gfile.GFile):
        tf.train.Example.FromString(record)
        writer.write(record)
        count += 1
  except BadRecord as e:
    raise st.StoreError(f"{path}: expected TFRecords of tf.train.Example, found a "
                        f"broken record at {e}") from None
  except Exception as e:  # noqa: BLE001  (protobuf's DecodeError, and kin)
    raise st.StoreError(f"{path}: record {count + 1}: expected a tf.train.Example, "
                        f"found bytes that do not parse as one ({type(e).__name__})") from None
  if not count:
    raise st.StoreError(f"{path}: expected served requests, found no records")
  return copy, count


def _training(store, run: st.Run):
  """(split name, its statistics, the schema) of the run's newest training split."""
  splits = st.split_uris(store, st.output(store, run, "StatisticsGen", "statistics"))
  train = sorted((s for s in splits if s.startswith("train")),
                 key=lambda s: spans.span_of_split(s) or 0)
  schema = (st.output(store, run, "CuratedSchema", "schema")
            or st.output(store, run, "SchemaGen", "schema"))
  if not train or schema is None:
    raise st.StoreError(f"run {run.id} has no training statistics and schema to compare "
                        "with: pick a run whose StatisticsGen ran (--run)")
  stats = tfdv.load_stats_binary(os.path.join(splits[train[-1]], "FeatureStats.pb"))
  return train[-1], stats, io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(schema.uri))


def _rules(store, run: st.Run):
  """The features' kinds and the thresholds, as the run's DriftGate had them."""
  if "DriftGate" in run.nodes:
    return drift.rules_from_json(st.exec_property(run.nodes["DriftGate"].execution, "rules"))
  decl = st.declaration(store, run)
  if decl is None:
    raise st.StoreError(f"run {run.id} ran neither Transform nor the Trainer: its "
                        "declaration is unknown; pick another run (--run)")
  return drift.rules_from_json(drift.rules_json(decl))


def _carried(feature) -> bool:
  """Whether any served example has a value for the feature."""
  for kind in ("num_stats", "string_stats"):
    if feature.HasField(kind):
      return getattr(feature, kind).common_stats.num_non_missing > 0
  return False


def skew_lines(store, pipeline: str, run_id, examples: str) -> Tuple[List[str], bool]:
  """The report's lines, and whether any feature is skewed."""
  run = st.find_run(store, pipeline, run_id)
  split, training, schema = _training(store, run)
  kinds, rules = _rules(store, run)
  with tempfile.TemporaryDirectory() as tmp:
    copy, count = _requests(examples, tmp)
    served = tfdv.generate_statistics_from_tfrecord(
        copy, stats_options=tfdv.StatsOptions(schema=schema, infer_type_from_schema=True))
  present = {".".join(f.path.step) for f in served.datasets[0].features
             if _carried(f)}
  measured = drift.skew(training, served, schema, kinds, rules)
  header = f"skew: {count} served examples in {examples} against {split}'s statistics " \
           f"(run {run.id})"
  return listing(header, count, measured, sorted(set(kinds) - present))


def listing(header: str, count: int, measured: List[drift.Measured],
            absent: List[str]) -> Tuple[List[str], bool]:
  """The report's lines: the header, a note when the sample is small, each
  measured feature (those within their thresholds first, the skewed ones
  last), the features no request carried, and the verdict; and whether any
  feature is skewed."""
  shown = sorted((m for m in measured if m.feature not in absent),
                 key=lambda m: (m.drifted, m.feature))
  lines = [header] + small_sample(count, [m.threshold for m in shown])
  lines += [f"  {m.line()}" for m in shown]
  lines += [f"  feature '{name}': in none of the served examples" for name in absent]
  skewed = sorted({m.feature for m in measured if m.drifted} | set(absent))
  lines.append(f"skewed: {', '.join(skewed)}" if skewed
               else "no feature skewed beyond its threshold")
  return lines, bool(skewed)


def small_sample(count: int, thresholds: List[float]) -> List[str]:
  """Why few served examples flag features more easily, when they are few.

  A share of the served values (a category's, a histogram bucket's) has a
  sampling error of about 1/sqrt(N) for N examples, however close serving
  is to training: once that is above a threshold, the distance measured
  (the largest change in a share, or the Jensen-Shannon divergence of the
  two histograms) passes it by chance alone. Hence a floor of
  1/threshold**2 examples (100 at the default 0.1)."""
  if not thresholds or count <= 0:
    return []
  floor = math.ceil(1 / min(thresholds) ** 2)
  if count >= floor:
    return []
  return [f"note: {count} served examples are few: by chance alone each share of a "
          f"feature's values moves by about 1/sqrt({count}) = {1 / math.sqrt(count):.2f}, "
          f"more than the threshold {min(thresholds):g}, so features are flagged as "
          f"skewed more easily; a `skewed` holds from {floor} examples (1/threshold^2) on"]

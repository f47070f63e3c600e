"""The data sections: statistics of each split side by side, images, anomalies.

The numbers are TFDV's, read from StatisticsGen's and ExampleValidator's
outputs. TFDV draws its own statistics view with Facets, which it loads from
the internet at view time; the report keeps that view one click away (it
loads only when opened) and shows the same statistics as plain tables, so
that the file reads offline.
"""

import collections
import gzip
import io
import os
from typing import Dict, List, Optional

import tensorflow as tf
import tensorflow_data_validation as tfdv
from PIL import Image
from tensorflow_data_validation.utils import display_util

from dataset.declaration import Declaration
from store.report.html import Raw, esc, table

SAMPLE_IMAGES = 500  # records decoded per split for the image summary


def load_statistics(splits: Dict[str, str]) -> Dict[str, object]:
  """split -> DatasetFeatureStatisticsList, from StatisticsGen's split folders
  (none when StatisticsGen did not run)."""
  found = {}
  for split, folder in splits.items():
    path = os.path.join(folder, "FeatureStats.pb")
    if tf.io.gfile.exists(path):
      found[split] = tfdv.load_stats_binary(path)
  # train first, then the rest, as people compare them
  return dict(sorted(found.items(), key=lambda kv: (kv[0] != "train", kv[0])))


def statistics_section(stats: Dict[str, object]) -> List[str]:
  if not stats:
    return ['<p class="note">StatisticsGen did not run in this run.</p>']
  splits = list(stats)
  features = collections.OrderedDict()
  for split in splits:
    for feature in stats[split].datasets[0].features:
      features.setdefault(".".join(feature.path.step) or feature.name, {})[split] = feature
  rows = []
  for name, per_split in features.items():
    any_feature = next(iter(per_split.values()))
    row = [name, _type(any_feature)]
    for split in splits:
      feature = per_split.get(split)
      row += [_summary(feature), Raw(_histogram(feature))] if feature else ["absent", ""]
    rows.append(row)
  counts = ", ".join(f"{s}: {stats[s].datasets[0].num_examples} examples" for s in splits)
  headers = ["feature", "type"]
  for split in splits:
    headers += [f"{split}", f"{split} histogram"]
  parts = [f"<p>{esc(counts)}</p>", table(headers, rows)]
  if len(splits) >= 2:
    facets = display_util.get_statistics_html(
        stats[splits[0]], stats[splits[1]], lhs_name=splits[0], rhs_name=splits[1])
    # The frame gets its content only when opened: offline, a closed view
    # costs nothing and logs nothing.
    parts.append(
        "<details ontoggle=\"var f = this.querySelector('iframe');"
        " if (this.open &amp;&amp; !f.srcdoc) f.srcdoc = f.dataset.facets;\">"
        "<summary>TFDV's own view (Facets Overview; it loads Facets from "
        "the internet when opened)</summary>"
        f'<iframe title="TFDV statistics" width="100%" height="700" '
        f'data-facets="{esc(facets)}"></iframe></details>')
  return parts


def _type(feature) -> str:
  from tensorflow_metadata.proto.v0 import statistics_pb2
  return statistics_pb2.FeatureNameStatistics.Type.Name(feature.type).lower()


def _common(feature):
  for kind in ("num_stats", "string_stats", "bytes_stats"):
    if feature.HasField(kind):
      return getattr(feature, kind).common_stats
  return None


def _summary(feature) -> str:
  common = _common(feature)
  total = (common.num_non_missing + common.num_missing) if common else 0
  missing = f"missing {100 * common.num_missing / total:.1f}%" if total else ""
  if feature.HasField("num_stats"):
    s = feature.num_stats
    text = (f"mean {s.mean:.4g} ± {s.std_dev:.3g}; min {s.min:.4g}, "
            f"median {s.median:.4g}, max {s.max:.4g}; zeros {s.num_zeros}")
  elif feature.HasField("string_stats"):
    s = feature.string_stats
    top = ", ".join(f"{v.value} ({v.frequency:.0f})" for v in s.top_values[:3])
    text = f"{s.unique} unique; top {top}"
  elif feature.HasField("bytes_stats"):
    s = feature.bytes_stats
    text = f"bytes: {s.unique} unique, {s.avg_num_bytes:.0f} B on average"
  else:
    text = ""
  if common and common.max_num_values > 1:
    text += f"; {common.min_num_values}-{common.max_num_values} values per example"
  return "; ".join(t for t in (text, missing) if t)


def _histogram(feature, width: int = 120, height: int = 28) -> str:
  """A small inline SVG of the feature's standard histogram, if it has one."""
  if not feature.HasField("num_stats") or not feature.num_stats.histograms:
    return ""
  buckets = feature.num_stats.histograms[0].buckets
  if not buckets:
    return ""
  top = max(b.sample_count for b in buckets) or 1
  w = width / len(buckets)
  bars = "".join(
      f'<rect x="{i * w:.1f}" y="{height - height * b.sample_count / top:.1f}" '
      f'width="{max(w - 1, 1):.1f}" height="{height * b.sample_count / top:.1f}" fill="#5b8bd0"/>'
      for i, b in enumerate(buckets))
  return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
          f'role="img" aria-label="histogram">{bars}</svg>')


def images_section(examples: Dict[str, str], decl: Optional[Declaration]) -> List[str]:
  """Each image feature by decoded size and format, from a sample of records."""
  images = decl.of_kind("image") if decl else []
  if not images:
    return ['<p class="note">No image features declared.</p>']
  if not examples:
    return ['<p class="note">ImportExampleGen did not run in this run.</p>']
  rows = []
  for split, folder in sorted(examples.items()):
    tallies = _image_tallies(sorted(tf.io.gfile.glob(os.path.join(folder, "*"))), images)
    for feature in images:
      formats, sizes, nbytes = tallies[feature.name]
      shown = ", ".join(f"{k} {v}" for k, v in formats.most_common())
      size_text = ", ".join(f"{w}x{h}x{c} ({n})" for (w, h, c), n in sizes.most_common(4))
      average = sum(nbytes) / len(nbytes) if nbytes else 0
      rows.append([feature.name, split, feature.image.encoding, shown, size_text,
                   f"{average:.0f}", sum(formats.values())])
  return [table(["feature", "split", "declared", "formats found", "decoded size "
                 "(width x height x channels, count)", "bytes, mean", "sampled"],
                rows, numeric=(5, 6))]


def _image_tallies(files: List[str], images) -> dict:
  tallies = {f.name: (collections.Counter(), collections.Counter(), []) for f in images}
  compression = "GZIP" if files and files[0].endswith(".gz") else ""
  dataset = tf.data.TFRecordDataset(files, compression_type=compression).take(SAMPLE_IMAGES)
  for record in dataset.as_numpy_iterator():
    example = tf.train.Example.FromString(record)
    for feature in images:
      values = example.features.feature[feature.name].bytes_list.value
      if not values:
        continue
      formats, sizes, nbytes = tallies[feature.name]
      nbytes.append(len(values[0]))
      if feature.image.encoding == "raw":
        formats["raw"] += 1
        sizes[(feature.image.width, feature.image.height, feature.image.channels)] += 1
        continue
      try:
        with Image.open(io.BytesIO(values[0])) as image:
          formats[(image.format or "unknown").lower()] += 1
          sizes[(image.width, image.height, len(image.getbands()))] += 1
      except Exception:  # noqa: BLE001  (the summary reports undecodable bytes, not fails on them)
        formats["undecodable"] += 1
  return tallies


def load_anomalies(splits: Dict[str, str]) -> Dict[str, object]:
  """split -> Anomalies from an ExampleValidator output folder (none when
  ExampleValidator did not run)."""
  from tensorflow_metadata.proto.v0 import anomalies_pb2
  found = {}
  for split, folder in sorted(splits.items()):
    path = os.path.join(folder, "SchemaDiff.pb")
    if not tf.io.gfile.exists(path):
      continue
    anomalies = anomalies_pb2.Anomalies()
    with tf.io.gfile.GFile(path, "rb") as f:
      data = f.read()
    anomalies.ParseFromString(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    found[split] = anomalies
  return found


def anomalies_section(anomalies: Dict[str, object], ran: bool) -> List[str]:
  if not ran:
    return ['<p class="note">ExampleValidator did not run in this run.</p>']
  parts = []
  for split, found in anomalies.items():
    if found.anomaly_info or found.HasField("dataset_anomaly_info"):
      frame = display_util.get_anomalies_dataframe(found)
      parts.append(f"<h3>{esc(split)}</h3>" + frame.to_html(escape=True, border=0))
  if not parts:
    splits = " or ".join(anomalies) or "any split"
    return [f'<p class="ok">No anomalies: the statistics of {esc(splits)} match the schema.</p>']
  return parts

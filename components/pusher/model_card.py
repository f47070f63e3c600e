"""The model card kept beside every pushed version: what the model was
trained on, with what settings, how it was judged against the model it
replaced, what the serving check measured, the drift it was trained
through, and its lineage. Markdown (`assets.extra/model_card.md`, what
`python -m commands.serving versions` points to) and
HTML (`assets.extra/model_card.html`), from the same sections.

model-card-toolkit 2.0 pins TFMA < 0.42 and tfx-addons' generator tfx <
1.11, so neither installs beside TFX 1.16: the Pusher writes this one from
its own inputs, with the push, so the card is there exactly when the
version is (serving.push writes it into the copy before it lands).
"""

import html
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple, Union

from tensorflow_metadata.proto.v0 import statistics_pb2
from tfx.dsl.io import fileio
from tfx.types import artifact_utils

from components.evaluator import gate

# A section: its title, then lines of text and tables ((header, rows)).
Part = Union[str, Tuple[List[str], List[List[str]]]]
Section = Tuple[str, List[Part]]


def statistics_parts(statistics) -> List[Part]:
  """Each split's rows, and a line per feature of the first split's."""
  if statistics is None:
    return ["statistics: not given to the Pusher"]
  parts, first = [], None
  for split in artifact_utils.decode_split_names(statistics.split_names):
    path = os.path.join(artifact_utils.get_split_uri([statistics], split), "FeatureStats.pb")
    if not fileio.exists(path):
      continue
    with fileio.open(path, "rb") as f:
      found = statistics_pb2.DatasetFeatureStatisticsList.FromString(f.read())
    for dataset in found.datasets:
      parts.append(f"split {split}: {dataset.num_examples} examples")
      first = first or dataset
  if first is not None:
    parts.append((["feature", "summary"],
                  [[f.path.step[0] if f.path.step else f.name, _summary(f)]
                   for f in first.features]))
  return parts


def _summary(feature) -> str:
  if feature.HasField("num_stats"):
    n = feature.num_stats
    return (f"mean {n.mean:.4g}, std {n.std_dev:.4g}, min {n.min:.4g}, max {n.max:.4g}, "
            f"missing {n.common_stats.num_missing}")
  if feature.HasField("string_stats"):
    s = feature.string_stats
    top = ", ".join(f"{v.value} ({v.frequency:.0f})" for v in s.top_values[:3])
    return f"{s.unique} values" + (f"; most frequent: {top}" if top else "") + \
        f"; missing {s.common_stats.num_missing}"
  return "bytes"


def evaluation_parts(judged: Optional[dict]) -> List[Part]:
  if not judged or judged.get("value") is None:
    return ["the Evaluator's judgement: not recorded"]
  parts = [f"{judged['metric']}: {judged['value']:.4f} on the eval examples"]
  if judged.get("baseline_value") is not None:
    change = judged["value"] - judged["baseline_value"]
    interval = (f", 95% interval {judged['change_low']:+.4f} to {judged['change_high']:+.4f}"
                if judged.get("change_low") is not None else "")
    parts.append(f"the model it replaced (version {judged['judged_against']}): "
                 f"{judged['baseline_value']:.4f} on the same examples; change "
                 f"{change:+.4f}{interval}")
  else:
    parts.append("no model was served before it: judged by the threshold alone")
  whole = judged.get("whole") or {}
  if whole.get("note"):
    parts.append(whole["note"])
  rows = judged.get("slices") or []
  if rows:
    parts.append((["slice", "examples", judged["metric"], "replaced model", "verdict"],
                  [[r["slice"], str(r["examples"]), _num(r["value"]), _num(r["served"]),
                    gate.verdict_words(r)]
                   for r in rows]))
  return parts


def _num(value) -> str:
  return "" if value is None else f"{value:.4f}"


def sections(about: Dict[str, str], trained_on: Sequence[str], statistics, settings: dict,
             judged: Optional[dict], serving_line: str, drift: Optional[dict],
             lineage: Dict[str, str]) -> List[Section]:
  """The card's sections, in order."""
  drift_parts: List[Part] = ["no drift check (data without spans)"]
  if drift:
    drift_parts = [drift.get("compared") or drift.get("note") or "measured"]
    drift_parts += [f"drifted: {line}" for line in drift.get("drifted", [])] or [
        "nothing beyond its thresholds"]
  return [
      ("Model", [f"{k}: {v}" for k, v in about.items()]),
      ("Trained on", [f"splits: {', '.join(trained_on) or 'not recorded'}",
                      *statistics_parts(statistics)]),
      ("Settings", [(["setting", "value"],
                     [[k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list))
                       else str(v)] for k, v in sorted(settings.items())])]),
      ("Evaluation", evaluation_parts(judged)),
      ("Serving check", [serving_line]),
      ("Drift against the previous span", drift_parts),
      ("Lineage", [(["artifact", "ML Metadata id"], [[k, v] for k, v in lineage.items()])]),
  ]


def markdown(title: str, parts: List[Section]) -> str:
  lines = [f"# {title}", ""]
  for name, items in parts:
    lines += [f"## {name}", ""]
    for item in items:
      if isinstance(item, str):
        lines += [f"- {item}"]
      else:
        header, rows = item
        lines += ["", _row(header), "|" + " --- |" * len(header)]
        lines += [_row(row) for row in rows]
    lines.append("")
  return "\n".join(lines)


def _row(cells) -> str:
  """A Markdown table row; a `|` inside a cell is escaped."""
  return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def to_html(title: str, parts: List[Section]) -> str:
  body = [f"<h1>{html.escape(title)}</h1>"]
  for name, items in parts:
    body.append(f"<h2>{html.escape(name)}</h2>")
    lines = [f"<li>{html.escape(i)}</li>" for i in items if isinstance(i, str)]
    if lines:
      body.append("<ul>" + "".join(lines) + "</ul>")
    for header, rows in (i for i in items if not isinstance(i, str)):
      body.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header)
                  + "</tr>" + "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>"
                                                        for c in row) + "</tr>"
                                      for row in rows) + "</table>")
  return ("<!doctype html><html><head><meta charset='utf-8'><title>"
          f"{html.escape(title)}</title><style>body{{font-family:sans-serif;max-width:60em}}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
          "</style></head><body>" + "".join(body) + "</body></html>")

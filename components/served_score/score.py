"""The served model's score on a span, and what it says.

`newest_span_splits` picks the splits of the window's newest span;
`scored` turns TFMA's numbers (components/evaluator/evaluation.py `load`)
into the record kept beside the serving dir's versions
(`<serving dir>/monitoring/<version>/span-<N>.json`); `verdict` is the one
line a run prints when the served model fell below its threshold, or more
than `max_change` below its value at its blessing.
"""

import json
import os
from typing import Dict, List, Optional

from dataset import metrics, spans
from dataset.thresholds import Evaluation
from runtime import storage

MONITORING = "monitoring"  # in the serving dir


def newest_span_splits(split_names: List[str]) -> List[str]:
  """Every split of the newest span: the served model was trained before
  it, so its train split is as unseen as its eval split, and twice the
  examples narrow the interval. Data without spans: its eval splits."""
  numbered = [s for s in split_names if spans.span_of_split(s) is not None]
  if not numbered:
    return [s for s in split_names if s.startswith("eval")]
  newest = max(spans.span_of_split(s) for s in numbered)
  return sorted(s for s in numbered if spans.span_of_split(s) == newest)


def scored(found: dict, eval_config_json: str, version: str, span: Optional[int],
           rules: Evaluation) -> dict:
  """The record of one score: the blessing metric's value, its 95% interval
  and the examples counted, overall and per declared slice."""
  metric = metrics.blessing(eval_config_json)

  def row(key) -> dict:
    numbers = found.get(key, {})
    low, high = numbers.get("candidate interval", {}).get(metric.tfma_key, (None, None))
    return {"value": numbers.get("candidate", {}).get(metric.tfma_key), "low": low,
            "high": high, "count": numbers.get("candidate", {}).get("example_count")}

  slices = [{"slice": "/".join(f"{k}={v}" for k, v in key), **row(key)}
            for key in sorted(k for k in found if k and k[0][0] in
                              {s.feature for s in rules.slices})]
  return {"version": version, "span": span, "metric": metric.name,
          "higher_is_better": metric.higher_is_better, "threshold": rules.threshold,
          "max_change": rules.max_change, **row(()), "slices": slices}


def verdict(record: dict, blessed_value: Optional[float]) -> str:
  """One line when the served model fell below its threshold, or more than
  `max_change` below its value at its blessing; "" otherwise."""
  value = record.get("value")
  if value is None:
    return ""
  sign = 1 if record["higher_is_better"] else -1
  where = (f"served model (version {record['version']}) on span {record['span']}: "
           f"{record['metric']} {value:.4f}")
  if record["low"] is not None:
    where += f" [{record['low']:.4f}, {record['high']:.4f}]"
  if sign * (value - record["threshold"]) < 0:
    return f"{where}, past its threshold {record['threshold']}"
  if blessed_value is not None and sign * (blessed_value - value) > record["max_change"]:
    return (f"{where}, {abs(blessed_value - value):.4f} worse than its "
            f"{blessed_value:.4f} at its blessing (max_change {record['max_change']})")
  return ""


def record_path(serving_dir: str, version: str, span: Optional[int]) -> str:
  name = f"span-{span}.json" if span is not None else "latest.json"
  return os.path.join(serving_dir, MONITORING, version, name)


def write(serving_dir: str, record: dict) -> str:
  path = record_path(serving_dir, record["version"], record["span"])
  storage.gfile().makedirs(os.path.dirname(path))
  with storage.gfile().GFile(path, "w") as f:
    f.write(json.dumps(record, sort_keys=True))
  return path


def history(serving_dir: str) -> List[Dict]:
  """Every recorded score, by span then version."""
  root = os.path.join(serving_dir, MONITORING)
  if not storage.gfile().isdir(root):
    return []
  found = []
  for folder, _, names in storage.gfile().walk(root):
    for name in names:
      if name.endswith(".json"):
        with storage.gfile().GFile(os.path.join(folder, name)) as f:
          found.append(json.load(f))
  return sorted(found, key=lambda r: (r.get("span") or 0, r["version"]))

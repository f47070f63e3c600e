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

import serving
from dataset import metrics, spans
from dataset.thresholds import Evaluation
from runtime import storage
from serving import history as serving_history

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


def data_version(splits: List[str]) -> Optional[int]:
  """The span's data version (`eval_span4_v2`: 2), None when unversioned."""
  return max((v for v in map(spans.version_of_split, splits) if v is not None), default=None)


def unseen(trained_on: Optional[List[str]], splits: List[str]) -> bool:
  """Whether the served version was trained before the span of `splits`
  (a version that recorded nothing was: it predates the record)."""
  newest = {spans.span_of_split(s) for s in splits}
  return not newest & {spans.span_of_split(s) for s in trained_on or []}


def scored(found: dict, eval_config_json: str, version: str, span: Optional[int],
           rules: Evaluation) -> dict:
  """The record of one score: the blessing metric's value, its 95% interval
  and the examples counted, overall and per declared slice."""
  metric = metrics.blessing(eval_config_json)

  def row(key) -> dict:
    numbers = found.get(key, {})
    low, high = metric.clipped(
        *numbers.get("candidate interval", {}).get(metric.tfma_key, (None, None)))
    return {"value": numbers.get("candidate", {}).get(metric.tfma_key), "low": low,
            "high": high, "count": numbers.get("candidate", {}).get("example_count")}

  slices = [{"slice": "/".join(f"{k}={v}" for k, v in key), **row(key)}
            for key in sorted(k for k in found if k and k[0][0] in
                              {s.feature for s in rules.slices})]
  return {"version": version, "span": span, "metric": metric.name,
          "higher_is_better": metric.higher_is_better, "threshold": rules.threshold,
          "max_change": rules.max_change, **row(()), "slices": slices}


def verdict(record: dict, blessed: Optional[dict]) -> str:
  """One line when the served model is worse than its threshold, or more
  than `max_change` worse than its value at its blessing (`blessed.json`,
  when it measured the same metric); "" otherwise."""
  value = record.get("value")
  if value is None:
    return ""
  blessed_value = (blessed or {}).get("value") if (blessed or {}).get(
      "metric") == record["metric"] else None
  sign = 1 if record["higher_is_better"] else -1
  if sign * (value - record["threshold"]) < 0:
    return f"{_where(record)}, past its threshold {record['threshold']}"
  if blessed_value is not None and sign * (blessed_value - value) > record["max_change"]:
    return (f"{_where(record)}, {abs(blessed_value - value):.4f} worse than its "
            f"{blessed_value:.4f} at its blessing (max_change {record['max_change']})")
  return ""


def _where(record: dict) -> str:
  where = (f"served model (version {record['version']}) on span {record['span']}: "
           f"{record['metric']} {record['value']:.4f}")
  if record.get("low") is not None:
    where += f" [{record['low']:.4f}, {record['high']:.4f}]"
  return where


def said(published: dict) -> str:
  """What ServedScore's published record says, in one line: its verdict,
  why nothing was scored, or that the served model holds."""
  if published.get("line") or published.get("note"):
    return published.get("line") or f"served model: {published['note']}"
  if published.get("value") is None:
    return "served model: not scored"
  return f"{_where(published)}, within its threshold {published['threshold']}"


def record_path(serving_dir: str, version: str, span: Optional[int],
                data: Optional[int] = None) -> str:
  name = (f"span-{span}" if span is not None else "latest") + (f"-v{data}" if data else "")
  return os.path.join(serving_dir, MONITORING, version, name + ".json")


def write(serving_dir: str, record: dict) -> str:
  path = record_path(serving_dir, record["version"], record["span"],
                     record.get("data_version"))
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
  return sorted(found, key=lambda r: (r.get("span") or 0, r.get("data_version") or 0,
                                      r["version"]))


def rollbacks(serving_dir: str) -> Dict[str, str]:
  """version -> the version it copies, for each rollback's version."""
  found = {os.path.basename(p): serving_history.rolled_back(p)
           for p in serving.versions(serving_dir)}
  return {version: record["to"] for version, record in found.items() if record}

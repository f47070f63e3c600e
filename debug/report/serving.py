"""The report's serving-check section: what loading the candidate in a fresh
process found (serving/check.py), each check and the latency figures."""

import json
from typing import List, Optional

import tensorflow as tf

from debug.report.html import esc, table
from metadata import store as st
from serving.check import RESULT_FILE


def load(store, run: st.Run) -> Optional[dict]:
  """ServingCheck's result in this run, or None when it did not run."""
  return read_result(st.output(store, run, "ServingCheck", "infra_blessing"))


def read_result(artifact) -> Optional[dict]:
  """The result a ServingCheck output (its InfraBlessing) holds, with
  whether it checked at all; None for no artifact or no result file."""
  if artifact is None:
    return None
  path = f"{artifact.uri}/{RESULT_FILE}"
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return {**json.loads(f.read()),
            "checked": bool(artifact.custom_properties["checked"].int_value)}


def section_parts(result: Optional[dict]) -> List[str]:
  if result is None:
    return ['<p class="note">The serving check did not run in this run.</p>']
  if not result["checked"]:
    return [f'<p class="note">{esc(result["reason"].capitalize())}.</p>']
  parts = [f'<p class="ok">Passed: the model loads in a fresh process and serves '
           f'{result["examples"]} eval examples as its signature promises.</p>'
           if result["passed"] else
           f'<p class="bad">FAILED, so the model was not pushed: {esc(result["reason"])}</p>']
  parts.append(table(["check", "result", "detail"],
                     [[c["name"], "ok" if c["ok"] else "FAILED", c["detail"]]
                      for c in result["checks"]]))
  latency = result.get("latency_ms", {})
  if latency:
    parts.append("<h3>Latency of serving_default (milliseconds)</h3>" + table(
        ["batch", "p50", "p99", "requests"],
        [[name.replace("batch_", ""), f"{f['p50']:.2f}", f"{f['p99']:.2f}", f["requests"]]
         for name, f in latency.items()], numeric=(0, 1, 2, 3)))
  return parts

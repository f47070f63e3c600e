"""The report's serving-check section: what loading the candidate in a fresh
process found (components/serving_check/check.py), each check and the latency figures."""

from typing import List, Optional

from store.report.html import esc, table


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
    parts.append("<h3>Latency of serving_examples (milliseconds)</h3>" + table(
        ["batch", "p50", "p99", "requests"],
        [[name.replace("batch_", ""), f"{f['p50']:.2f}", f"{f['p99']:.2f}", f["requests"]]
         for name, f in latency.items()], numeric=(0, 1, 2, 3)))
  return parts

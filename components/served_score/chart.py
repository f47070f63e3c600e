"""The served model's metric span by span, as an SVG chart: one
point per span scored (with its 95% interval), the served
version's changes marked (a push, or a rollback's copy), the threshold drawn.
For the report, the ServedScore step's page and `commands.serving scores`."""

import html
from typing import Dict, List, Optional

from components.served_score import score

WIDTH, HEIGHT, PAD = 480, 200, 36


def svg(records: List[Dict], rollbacks: Optional[Dict[str, str]] = None) -> str:
  """records: score.history's; rollbacks: version -> the version it copies."""
  points = [r for r in records if r.get("value") is not None and r.get("span") is not None]
  if not points:
    return "<p>No served model was scored yet.</p>"
  spans = sorted({r["span"] for r in points})
  threshold = points[-1]["threshold"]
  values = [r["value"] for r in points] + [threshold] + [
      b for r in points for b in (r.get("low"), r.get("high")) if b is not None]
  low, high = min(values), max(values)
  high = high if high > low else low + 1

  def x(span):
    return PAD + (WIDTH - 2 * PAD) * (spans.index(span) / max(len(spans) - 1, 1))

  def y(value):
    return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value - low) / (high - low)

  parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'role="img" aria-label="served model, {html.escape(points[-1]["metric"])} by span">',
           f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(threshold):.1f}" y2="{y(threshold):.1f}" '
           f'stroke="#c00" stroke-dasharray="4 3"><title>threshold {threshold}</title></line>']
  previous = None
  for r in points:
    cx, cy = x(r["span"]), y(r["value"])
    if r.get("low") is not None:
      parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(r["low"]):.1f}" '
                   f'y2="{y(r["high"]):.1f}" stroke="#888"/>')
    if previous is not None and r["version"] != previous:
      what = (f"rollback to {rollbacks[r['version']]}" if rollbacks and r["version"] in rollbacks
              else f"push of {r['version']}")
      parts.append(f'<line x1="{cx - 6:.1f}" x2="{cx - 6:.1f}" y1="{PAD}" y2="{HEIGHT - PAD}" '
                   f'stroke="#36c"><title>{html.escape(what)}</title></line>'
                   f'<text x="{cx - 8:.1f}" y="{PAD - 6}" text-anchor="end" font-size="10" '
                   f'fill="#36c">{html.escape(what)}</text>')
    previous = r["version"]
    parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="#000"><title>span '
                 f'{r["span"]}, version {html.escape(r["version"])}: {r["metric"]} '
                 f'{r["value"]:.4f}</title></circle>')
    parts.append(f'<text x="{cx:.1f}" y="{HEIGHT - 8}" text-anchor="middle" '
                 f'font-size="11">span {r["span"]}</text>')
  parts.append("</svg>")
  return "".join(parts)


def figure(line: str, serving_dir: str) -> str:
  """The line and the chart of every score recorded in `serving_dir`, as
  the report and the step's page show them."""
  return (f"<p>{html.escape(line)}</p>"
          + svg(score.history(serving_dir), score.rollbacks(serving_dir)))

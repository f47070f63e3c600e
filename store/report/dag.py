"""The DAG as an inline SVG: a box per component, its state and duration.

Rows are the longest path from a source, so every edge points down; a
pipeline is deeper than it is wide, and this keeps it within the page.
"""

from typing import Dict, List, Optional

from store.report.html import esc

COLOURS = {"COMPLETE": "#d9f2de", "CACHED": "#dde8f7", "FAILED": "#f8d3d3",
           "RUNNING": "#fff1c2", "not run": "#eeeeee"}
BOX_W, BOX_H, GAP_X, GAP_Y = 180, 46, 24, 26


def layout(upstream: Dict[str, List[str]]) -> Dict[str, tuple]:
  """node -> (row, position in the row)."""
  column: Dict[str, int] = {}

  def depth(node: str, seen=()) -> int:
    if node not in column:
      parents = [p for p in upstream.get(node, []) if p in upstream and p not in seen]
      column[node] = 1 + max((depth(p, seen + (node,)) for p in parents), default=-1)
    return column[node]

  rows: Dict[int, int] = {}
  placed = {}
  for node in upstream:  # in pipeline order, so rows follow it
    col = depth(node)
    placed[node] = (col, rows.get(col, 0))
    rows[col] = rows.get(col, 0) + 1
  return placed


def svg(upstream: Dict[str, List[str]], states: Dict[str, str],
        seconds: Dict[str, Optional[float]]) -> str:
  """The DAG of `upstream` (node -> its upstream nodes), coloured by state."""
  at = layout(upstream)
  if not at:
    return '<p class="note">No components recorded.</p>'

  def x(node):
    return 10 + at[node][1] * (BOX_W + GAP_X)

  def y(node):
    return 10 + at[node][0] * (BOX_H + GAP_Y)

  width = 20 + (1 + max(p for _, p in at.values())) * (BOX_W + GAP_X)
  height = 20 + (1 + max(r for r, _ in at.values())) * (BOX_H + GAP_Y)
  parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="pipeline DAG" '
           f'width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
           'markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" '
           'fill="#888"/></marker></defs>']
  for node, parents in upstream.items():
    for parent in parents:
      if parent in at:
        x1, y1 = x(parent) + BOX_W / 2, y(parent) + BOX_H
        x2, y2 = x(node) + BOX_W / 2, y(node)
        mid = (y1 + y2) / 2
        parts.append(f'<path d="M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}" '
                     'fill="none" stroke="#888" marker-end="url(#arrow)"/>')
  for node in upstream:
    state = states.get(node, "not run")
    took = seconds.get(node)
    detail = state + (f" · {took:.1f}s" if took is not None else "")
    parts.append(
        f'<g class="node" data-node="{esc(node)}" data-state="{esc(state)}">'
        f'<rect x="{x(node)}" y="{y(node)}" width="{BOX_W}" height="{BOX_H}" rx="6" '
        f'fill="{COLOURS.get(state, "#eeeeee")}" stroke="#777"/>'
        f'<text x="{x(node) + 10}" y="{y(node) + 19}" font-weight="bold">{esc(node)}</text>'
        f'<text x="{x(node) + 10}" y="{y(node) + 36}">{esc(detail)}</text></g>')
  parts.append("</svg>")
  return "".join(parts)

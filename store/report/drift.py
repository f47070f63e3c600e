"""The report's drift section: each feature's measure against its threshold
(components/drift_gate/drift_gate.py), and the two spans' distributions side by side
for the features that drifted."""

import io
from typing import List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file backend)

from store.report.html import esc, png, table  # noqa: E402


def chart(feature: str, shares: dict) -> bytes:
  """The earlier and the newest span's shares, side by side, as PNG bytes."""
  figure, axes = plt.subplots(1, 2, figsize=(8, 3), dpi=100, sharey=True)
  for ax, which in zip(axes, ("previous", "current")):
    pairs = shares.get(which, [])
    ax.bar(range(len(pairs)), [s for _, s in pairs], color="#888" if which == "previous"
           else "#c44")
    ax.set_xticks(range(len(pairs)), [label for label, _ in pairs], rotation=60, fontsize=7)
    ax.set_title(f"{feature}: {'earlier span' if which == 'previous' else 'newest span'}")
  axes[0].set_ylabel("share of values")
  figure.tight_layout()
  out = io.BytesIO()
  figure.savefig(out, format="png")
  plt.close(figure)
  return out.getvalue()


def section_parts(result: dict, ran: bool) -> List[str]:
  if not ran:
    return ['<p class="note">No drift check in this run: the data has no spans, or '
            'the run stopped before it.</p>']
  if not result.get("compared"):
    return [f'<p class="note">{esc(result.get("note", "nothing compared"))}.</p>']
  rows = [[m["feature"], m["measure"], f"{m['value']:.4f}", f"{m['threshold']:g}",
           "DRIFTED" if m["value"] > m["threshold"] else "within"]
          for m in result["measured"]]
  parts = [f"<p>{esc(result['compared'])}.</p>",
           table(["feature", "measure", "value", "threshold", ""], rows, numeric=(2, 3))]
  for feature, shares in sorted(result.get("distributions", {}).items()):
    parts.append(png(chart(feature, shares), f"{feature}: the two spans side by side"))
  return parts

"""The report's image check section (components/image_check/result.py's
result): each kind found with its count and decision, a few examples as
thumbnails side by side (an eval image beside the train image it repeats,
each with its split, file and record index), and each split's images per
class as bars."""

import os
from typing import List, Optional

from components.image_check import result as check_result
from store.report.html import Raw, esc, table

BAR_PIXELS = 240  # the longest bar


def section_parts(result: Optional[dict], ran: bool) -> List[str]:
  if not ran:
    return ['<p class="note">No image check in this run: the data declares no image '
            'feature.</p>']
  if not result:
    return ['<p class="note">The image check did not finish in this run.</p>']
  parts = [f"<p>{esc(check_result.describe(result))}.</p>"]
  found = result["findings"]
  if not found:
    parts.append('<p class="ok">Nothing found: no copies across or within the splits, '
                 'no unusable pictures, no class far below the others.</p>')
  else:
    parts.append(table(["kind", "found", "decision", "what"], [
        [f["kind"], f["count"], Raw(_decision(f["decision"])), f["describes"]]
        for f in found], numeric=(1,)))
  for finding in found:
    parts += _examples(finding)
  return parts + [_classes(result["classes"])]


def _decision(decision: str) -> str:
  return f'<span class="bad">{esc(decision)}</span>' if decision == "stop" else esc(decision)


def _examples(finding: dict) -> List[str]:
  if finding["kind"] == "minority_class":
    return [f"<h3>{esc(finding['kind'])}</h3><p>" + esc("; ".join(
        f"{e['split']}: class {e['label']}, {e['count']} images"
        for e in finding["examples"])) + "</p>"]
  groups = "".join('<div class="thumbs group">' + "".join(_figure(image) for image in group)
                   + "</div>" for group in finding["examples"])
  return [f"<h3>{esc(finding['kind'])}: {finding['count']} {esc(finding['describes'])}</h3>"
          + groups]


def _figure(image: dict) -> str:
  where = f"{image['split']} · {os.path.basename(image['file'])} #{image['index']}"
  label = f"label {image['label']}" if image.get("label") is not None else "no label"
  picture = (f'<img alt="{esc(where)}, {esc(label)}" src="{esc(image["thumb"])}">'
             if image.get("thumb") else f'<span class="bad">{esc(image.get("error", ""))}</span>')
  more = f"<br>and {image['more']} more" if image.get("more") else ""
  size = f" · {image['size']}" if image.get("size") else ""
  return (f'<figure title="{esc(image["file"])}">{picture}<figcaption>{esc(where)}<br>'
          f"{esc(label)}{esc(size)}{more}</figcaption></figure>")


def _classes(classes: dict) -> str:
  """Each split's images per class, as bars on one scale."""
  if not classes:
    return '<p class="note">No labels to count.</p>'
  top = max(n for by_label in classes.values() for n in by_label.values()) or 1
  rows = []
  for split, by_label in sorted(classes.items()):
    total = sum(by_label.values())
    for label, n in sorted(by_label.items()):
      width = max(1, round(BAR_PIXELS * n / top))
      rows.append([split, label, n, f"{100 * n / total:.1f}%", Raw(
          f'<span class="bar" style="display:inline-block;height:10px;width:{width}px;'
          f'background:#4a7bb7"></span>')])
  return "<h3>Images per class</h3>" + table(["split", "class", "images", "share", ""], rows,
                                              numeric=(2, 3))


"""What the image check found, as HTML (result.py's result): each kind
found with its count and decision, a few examples as thumbnails side by
side (an eval image beside the train image it repeats, each with its
split, file and record index), and each split's images per class as bars.

Two pages show it: the run report's section (store/report/, which takes
`section_parts`), and the step's own `page`, a `system.HTML` artifact the
Kubeflow and Vertex AI run pages show on the step, also in a run the
check stopped (the report is written only by a run that finishes,
kubeflow/compile/report_step.py). One home for the markup: the report's
helpers live a floor above the components, so the few this needs are here.
"""

import html
import os
from typing import List, Optional, Sequence

from components.image_check import result as check_result

BAR_PIXELS = 240  # the longest bar
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1em; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.num { text-align: right; }
.ok { color: #176f2c; font-weight: 600; } .bad { color: #b00020; font-weight: 600; }
.note { color: #555; font-style: italic; }
.group { display: inline-block; border: 1px solid #ccc; border-radius: 4px; margin: 4px;
         vertical-align: top; }
.thumbs figure { display: inline-block; margin: 4px; text-align: center; font-size: 12px; }
"""


def esc(value) -> str:
  return html.escape(str(value))


def _table(headers: Sequence[str], rows: List[Sequence[str]], numeric=()) -> str:
  """Rows of markup (cells already escaped)."""
  head = "".join(f"<th>{esc(h)}</th>" for h in headers)
  body = "".join("<tr>" + "".join(
      f'<td{" class=num" if i in numeric else ""}>{cell}</td>' for i, cell in enumerate(row))
      + "</tr>" for row in rows)
  return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def title(result: Optional[dict]) -> str:
  """"Image check", or "Row check" on data without an image (a table)."""
  return ((result or {}).get("checks") or "image check").capitalize()


def page(result: dict) -> str:
  """The findings as a page of their own (the step's `system.HTML`)."""
  heading = title(result)
  return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          f"<title>{heading}</title><style>{STYLE}</style></head><body>"
          f"<h2>{heading}</h2>\n" + "\n".join(section_parts(result, True))
          + "\n</body></html>\n")


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
                 + ('' if result.get("checks") == "row check" else 'no unusable pictures, ')
                 + 'no class far below the others.</p>')
  else:
    parts.append(_table(["kind", "found", "decision", "what"], [
        [esc(f["kind"]), esc(f["count"]), _decision(f["decision"]), esc(f["describes"])]
        for f in found], numeric=(1,)))
  for finding in found:
    parts += _examples(finding)
  return parts + [_classes(result["classes"])]


def _decision(decision: str) -> str:
  return f'<span class="bad">{esc(decision)}</span>' if decision == "stop" else esc(decision)


def _examples(finding: dict) -> List[str]:
  if finding["kind"] in check_result.CLASS_KINDS:
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
             if image.get("thumb") else f'<span class="bad">{esc(image["error"])}</span>'
             if image.get("error") else "")  # a row (the row check): no picture
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
      rows.append([esc(split), esc(label), esc(n), f"{100 * n / total:.1f}%",
                   f'<span class="bar" style="display:inline-block;height:10px;'
                   f'width:{width}px;background:#4a7bb7"></span>'])
  return "<h3>Images per class</h3>" + _table(["split", "class", "images", "share", ""], rows,
                                               numeric=(2, 3))


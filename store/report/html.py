"""The report's page: one HTML file with its styles and images inline.

No scripts and no links to anything outside the file, so it opens offline,
from a CI artifact or an e-mail, exactly as it was written.
"""

import base64
import html
from typing import Iterable, List, Sequence

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #666; }
.ok { color: #176f2c; font-weight: 600; }
.bad { color: #b00020; font-weight: 600; }
.note { color: #555; font-style: italic; }
code { background: #f4f4f4; padding: 0 3px; }
.side { display: flex; gap: 2em; flex-wrap: wrap; }
.group { display: inline-block; border: 1px solid #ccc; border-radius: 4px; margin: 4px;
         vertical-align: top; }
.thumbs figure { display: inline-block; margin: 4px; text-align: center; font-size: 12px; }
td img { margin-right: 4px; }
"""


def esc(value) -> str:
  return html.escape(str(value))


def table(headers: Sequence[str], rows: Iterable[Sequence], numeric: Sequence[int] = ()) -> str:
  """An HTML table; cells are escaped unless wrapped in Raw."""
  head = "".join(f"<th>{esc(h)}</th>" for h in headers)
  body = []
  for row in rows:
    cells = []
    for i, cell in enumerate(row):
      klass = ' class="num"' if i in numeric else ""
      text = cell.html if isinstance(cell, Raw) else esc(cell)
      cells.append(f"<td{klass}>{text}</td>")
    body.append("<tr>" + "".join(cells) + "</tr>")
  return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


class Raw:
  """Markup to put in a table cell as it is (already escaped)."""

  def __init__(self, markup: str):
    self.html = markup


def png(data: bytes, alt: str, width: int = 0) -> str:
  """An <img> with the PNG inline as a data URI."""
  size = f' width="{width}"' if width else ""
  return (f'<img alt="{esc(alt)}"{size} '
          f'src="data:image/png;base64,{base64.b64encode(data).decode()}">')


def section(anchor: str, title: str, parts: List[str]) -> str:
  return (f'<section id="{anchor}"><h2>{esc(title)}</h2>\n'
          + "\n".join(parts) + "\n</section>")


def page(title: str, subtitle: str, sections: List[str]) -> str:
  return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
          f"<h1>{esc(title)}</h1><p class=\"meta\">{esc(subtitle)}</p>\n"
          + "\n".join(sections) + "\n</body></html>\n")

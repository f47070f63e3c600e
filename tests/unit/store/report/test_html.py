"""store/report/html.py: the report's page is one file that shows what it
is given as text, never as markup, whatever a name or a reason holds."""

import base64
import re

from store.report import html

EVIL = '<script>alert("x")</script> & Co'


def test_a_table_escapes_every_cell_but_raw_markup_and_marks_numbers():
  table = html.table(["name", "count"], [[EVIL, 3], [html.Raw("<strong>best</strong>"), 4]],
                     numeric=(1,))
  assert table == (
      "<table><thead><tr><th>name</th><th>count</th></tr></thead><tbody>"
      "<tr><td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co</td>"
      '<td class="num">3</td></tr>'
      '<tr><td><strong>best</strong></td><td class="num">4</td></tr></tbody></table>')


def test_the_page_escapes_its_title_and_holds_no_script_or_outside_link():
  page = html.page(EVIL, "run <1>", [html.section("a", "<Data>", ["<p>ok</p>"])])
  assert "<script>" not in page and "&lt;script&gt;" in page
  assert '<section id="a"><h2>&lt;Data&gt;</h2>\n<p>ok</p>\n</section>' in page
  assert '<p class="meta">run &lt;1&gt;</p>' in page
  assert not re.search(r'(src|href)="(https?:)?//', page)


def test_an_image_is_inline_and_its_alt_text_escaped():
  img = html.png(b"\x89PNG bytes", 'a "quoted" <name>', width=64)
  assert img.startswith('<img alt="a &quot;quoted&quot; &lt;name&gt;" width="64" '
                        'src="data:image/png;base64,')
  data = img.split("base64,")[1].rstrip('">')
  assert base64.b64decode(data) == b"\x89PNG bytes"

"""store/report/drift.py: the report's drift section, each feature's measure
against its threshold, and a chart of both spans for each feature that
drifted (a PNG, inline)."""

import base64
import io

from PIL import Image

from store.report import drift

RESULT = {"compared": "train_span3 against span 2, from this run's statistics",
          "measured": [{"feature": "ink", "measure": "jensen_shannon", "value": 0.31234,
                        "threshold": 0.1},
                       {"feature": "<shape>", "measure": "l_infinity", "value": 0.05,
                        "threshold": 0.2}],
          "distributions": {"ink": {"previous": [["low", 0.7], ["high", 0.3]],
                                    "current": [["low", 0.2], ["high", 0.8]]}}}


def test_each_feature_is_measured_against_its_threshold_and_what_drifted_is_drawn():
  parts = drift.section_parts(RESULT, ran=True)
  assert parts[0] == "<p>train_span3 against span 2, from this run&#x27;s statistics.</p>"
  assert ('<tr><td>ink</td><td>jensen_shannon</td><td class="num">0.3123</td>'
          '<td class="num">0.1</td><td>DRIFTED</td></tr>') in parts[1]
  assert ('<tr><td>&lt;shape&gt;</td><td>l_infinity</td><td class="num">0.0500</td>'
          '<td class="num">0.2</td><td>within</td></tr>') in parts[1]
  assert len(parts) == 3 and parts[2].startswith('<img alt="ink: the two spans side by side"')
  picture = Image.open(io.BytesIO(base64.b64decode(parts[2].split("base64,")[1][:-2])))
  assert picture.format == "PNG" and picture.size == (800, 300)


def test_no_check_or_nothing_compared_is_a_note():
  assert "No drift check in this run" in drift.section_parts(RESULT, ran=False)[0]
  assert drift.section_parts({"note": "no earlier span to compare with"}, ran=True) == [
      '<p class="note">no earlier span to compare with.</p>']

"""store/report/tuning.py: the report's search section, best trial first and
marked, each trial's settings, score, steps, time and worker, text escaped;
or that the Tuner wrote nothing."""

import json

from store.report import tuning

SEARCH = {"why": "a new search was asked for (--tune)", "id": "span2-abc", "algorithm": "random",
          "workers": 2, "seconds": 41, "objective": "rmse",
          "trials": [{"trial": "01", "values": {"width": 64, "learning_rate": 0.0012345},
                      "score": 0.25, "steps": 20, "seconds": 3.21, "worker": 1,
                      "status": "COMPLETED"},
                     {"trial": "00", "values": {"width": 32, "learning_rate": 0.01},
                      "score": 0.5, "steps": 20, "seconds": 2.0, "worker": 0,
                      "status": "COMPLETED"},
                     {"trial": "02", "values": {"width": "<b>"}, "score": None, "steps": 0,
                      "seconds": None, "worker": None, "status": "FAILED"}]}


def _rows(parts) -> list:
  body = parts[-1].split("<tbody>")[1]
  return [row.replace('<td class="num">', "<td>").split("</td><td>")
          for row in body.removeprefix("<tr><td>").split("</td></tr><tr><td>")]


def test_the_search_is_a_table_best_first_with_each_trials_settings():
  parts = tuning.section_parts(SEARCH)
  assert parts[0] == "<p>a new search was asked for (--tune).</p>"
  assert parts[1].startswith("<p>Search <code>span2-abc</code>: random, 3 trials, 2 worker(s), "
                             "41 s; objective rmse on the eval split.")
  assert "<th>rmse</th>" in parts[2]
  rows = _rows(parts)
  assert rows[0] == ["<strong>best</strong>", "01", "learning_rate=0.001234, width=64", "0.2500",
                     "20", "3.2", "1", "COMPLETED"]
  assert rows[1][:4] == ["", "00", "learning_rate=0.01, width=32", "0.5000"]
  assert rows[2] == ["", "02", "width=&lt;b&gt;", "", "0", "", "", "FAILED</td></tr></tbody></table>"]


def test_a_search_whose_first_trial_failed_marks_none_best():
  failed = {**SEARCH, "trials": SEARCH["trials"][2:]}
  assert "<strong>best</strong>" not in "".join(tuning.section_parts(failed))


def test_no_results_is_a_note_and_results_load_from_the_tuners_file(tmp_path):
  assert tuning.section_parts({}) == ['<p class="note">The Tuner wrote no results in this run.</p>']
  assert tuning.load(None) == {} and tuning.load(str(tmp_path)) == {}
  (tmp_path / tuning.TRIALS).write_text(json.dumps(SEARCH))
  assert tuning.load(str(tmp_path)) == SEARCH

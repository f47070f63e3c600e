"""components/pusher/model_card.py: the card beside every pushed version says how
the model was judged against the one it replaced, slice by slice, in
Markdown and HTML from the same sections."""

from components.pusher import model_card

JUDGED = {
    "metric": "accuracy", "value": 0.91, "baseline_value": 0.93, "judged_against": "100",
    "change_low": -0.05, "change_high": 0.01,
    "whole": {"note": "the whole eval split passes on its evidence"},
    "slices": [{"slice": "site=D", "examples": 37, "value": 0.05, "served": 0.92,
                "failure": "site=D: accuracy 0.0500 against 0.9200", "judged": True}],
}


def _sections(judged):
  return model_card.sections({"version": "200"}, ["train"], None, {"epochs": 2}, judged,
                             "answered 8 requests", None, {"Model": "12"})


def test_the_evaluation_says_the_change_its_interval_and_each_slice():
  parts = model_card.evaluation_parts(JUDGED)
  assert parts[0] == "accuracy: 0.9100 on the eval examples"
  assert parts[1] == ("the model it replaced (version 100): 0.9300 on the same examples; "
                      "change -0.0200, 95% interval -0.0500 to +0.0100")
  assert parts[2] == "the whole eval split passes on its evidence"
  header, rows = parts[3]
  assert rows == [["site=D", "37", "0.0500", "0.9200",
                   "site=D: accuracy 0.0500 against 0.9200"]], rows


def test_a_first_model_and_an_unrecorded_judgement_say_so():
  first = model_card.evaluation_parts({"metric": "rmse", "value": 0.5})
  assert first[1] == "no model was served before it: judged by the threshold alone"
  assert model_card.evaluation_parts(None) == ["the Evaluator's judgement: not recorded"]


def test_markdown_and_html_carry_the_same_sections_escaped():
  sections = _sections(JUDGED)
  text = model_card.markdown("digits | v200", sections)
  page = model_card.to_html("digits <v200>", sections)
  for name, _ in sections:
    assert f"## {name}" in text and f"<h2>{name}</h2>" in page, name
  assert "| site=D | 37 |" in text and "<td>site=D</td>" in page
  assert "digits &lt;v200&gt;" in page and "<v200>" not in page
  assert "no drift check (data without spans)" in text

"""commands/serving/cli.py in this process: its help, and `scores` before
there is any score. (The commands on real serving dirs, each in a process
of its own: tests/processes/commands/serving/test_cli.py.)"""

from commands.serving import cli


def test_the_help_opens_with_a_whole_sentence():
  description = cli.build_parser().description
  assert description.startswith("python -m commands.serving versions|rollback|request|"
                                 "kserve|scores: a serving dir's versions, "), description
  assert "`" not in description and description.endswith("span by span."), description


def test_scores_without_a_score_say_they_come_with_spans_and_write_no_page(tmp_path):
  page = tmp_path / "scores.html"
  lines = cli.scores_lines(str(tmp_path / "serving"), str(page))
  assert lines[0].startswith(f"no score recorded in {tmp_path / 'serving'}/monitoring: "
                             "scores come with spans: each run over a new span scores "
                             "the model served then on it"), lines
  assert lines[1:] == [f"no chart written to {page}: no score to draw"], lines
  assert not page.exists()

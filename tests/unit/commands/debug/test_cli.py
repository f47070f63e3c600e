"""commands/debug/cli.py in this process, on stores written as TFX records
runs (tests/metadata_runs.py): which pipeline's store a command reads when
--output-dir holds another, or several. (Bad metadata files, each in a
process of its own: tests/processes/commands/debug/test_cli.py.)"""

import pytest

from commands.debug import cli
from runtime import startup
from tests.metadata_runs import Runs, serving_check_failed


@pytest.fixture(autouse=True)
def _started(monkeypatch):
  """The process set-up is the entry point's, not this test process's."""
  monkeypatch.setattr(startup, "start", lambda quiet=None: None)


def _debug(capsys, *argv) -> tuple:
  code = cli.main(list(argv))
  out, err = capsys.readouterr()
  return code, out, err


def test_runs_in_an_output_dir_of_one_other_pipeline_takes_it(tmp_path, capsys):
  serving_check_failed(Runs(tmp_path, "wine"), "run-1")
  code, out, err = _debug(capsys, "runs", "--output-dir", str(tmp_path))
  assert code == 0, err
  assert out.splitlines()[0].startswith("run run-1  started "), out


def test_a_pipeline_not_in_the_output_dir_names_those_that_are(tmp_path, capsys):
  serving_check_failed(Runs(tmp_path, "wine"), "run-1")
  code, out, err = _debug(capsys, "runs", "--output-dir", str(tmp_path), "--pipeline", "digits")
  assert code == 2 and out == ""
  assert err.strip() == (f"error: {tmp_path}: expected the runs of pipeline 'digits', "
                         "found those of 'wine' (--pipeline NAME)"), err


def test_several_pipelines_and_none_named_is_one_line_naming_them(tmp_path, capsys):
  for name in ("wine", "digits"):
    serving_check_failed(Runs(tmp_path, name), "run-1")
  code, out, err = _debug(capsys, "runs", "--output-dir", str(tmp_path))
  assert code == 2 and out == ""
  assert err.strip() == (f"error: {tmp_path}: holds the runs of pipelines 'digits', "
                         "'wine'; name one with --pipeline"), err
  code, out, err = _debug(capsys, "runs", "--output-dir", str(tmp_path), "--pipeline", "wine")
  assert code == 0 and out.startswith("run run-1"), err


def test_a_metadata_file_of_one_pipeline_needs_no_pipeline_flag(tmp_path, capsys):
  runs = Runs(tmp_path, "wine")
  serving_check_failed(runs, "run-1")
  code, out, err = _debug(capsys, "runs", "--metadata", runs.path)
  assert code == 0 and out.startswith("run run-1"), err

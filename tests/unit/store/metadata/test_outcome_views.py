"""store/metadata/outcome.py's `state` as every view of a local run shows it:
`python -m commands.debug runs`, the report's header and the run's record,
each read from a SQLite ML Metadata store as TFX records a run
(tests/metadata_runs.py)."""

import pytest

from commands.debug import cli
from runtime import startup
from store.metadata.outcome import Outcome
from store.report import render
from tests.metadata_runs import Runs, serving_check_failed


@pytest.fixture
def quiet_start(monkeypatch):
  """The command's process set-up is its entry point's, not this test process's."""
  monkeypatch.setattr(startup, "start", lambda quiet=None: None)


def _debug_runs(capsys, *argv) -> tuple:
  code = cli.main(["runs", *argv])
  out, err = capsys.readouterr()
  return code, out, err


def test_a_run_whose_serving_check_failed_says_so_in_every_view(tmp_path, capsys, quiet_start):
  runs = Runs(tmp_path)
  serving_check_failed(runs, "run-1")
  code, out, err = _debug_runs(capsys, "--metadata", runs.path, "--pipeline", "wine")
  assert code == 0, err
  assert out.splitlines()[0].endswith("  not pushed: serving check failed"), out

  record = runs.record()
  header = render(record).split('<p class="meta">')[1].split("</p>")[0]
  assert header.endswith(" · not pushed: serving check failed"), header
  assert {n.state for n in record.nodes.values()} == {"COMPLETE"}
  assert Outcome(record).state == "not pushed: serving check failed"

def test_each_kind_of_run_says_what_it_did(tmp_path, capsys, quiet_start):
  runs = Runs(tmp_path)
  runs.run("run-1", ("Evaluator", "COMPLETE", {"blessing": ("ModelBlessing", {"blessed": 1})}),
           ("ServingCheck", "COMPLETE", {"infra_blessing": (
               "InfraBlessing", {"blessed": 1, "checked": 1})}),
           ("Pusher", "COMPLETE", {"pushed_model": ("PushedModel", {
               "pushed": 1, "pushed_version": "1764000000",
               "pushed_destination": "serving/1764000000"})}))
  runs.run("run-2", ("Evaluator", "COMPLETE", {"blessing": ("ModelBlessing", {"blessed": 0})}),
           ("Pusher", "COMPLETE", {"pushed_model": ("PushedModel", {"pushed": 0})}))
  runs.run("run-3", ("StatisticsGen", "COMPLETE", {}), ("DriftGate", "FAILED", {}))
  runs.run("run-4", ("Transform", "COMPLETE", {}), ("Trainer", "FAILED", {}))
  runs.run("run-5", ("Evaluator", "CACHED", {"blessing": ("ModelBlessing", {"blessed": 1})}),
           ("Pusher", "CACHED", {"pushed_model": ("PushedModel", {
               "pushed": 1, "pushed_version": "1764000000"})}))
  runs.run("run-6", ("ImportExampleGen", "COMPLETE", {}), ("StatisticsGen", "COMPLETE", {}))
  # A rerun of run-2 with nothing new: its Pusher's refusal came from the cache.
  runs.run("run-7", ("Evaluator", "CACHED", {"blessing": ("ModelBlessing", {"blessed": 0})}),
           ("Pusher", "CACHED", {"pushed_model": ("PushedModel", {"pushed": 0})}))
  expected = ["pushed version 1764000000", "not pushed: not blessed",
              "not pushed: stopped by DriftGate", "failed at Trainer",
              "nothing new to train on (served from the cache)",
              "complete, without the Pusher (a partial run)",
              "nothing new to train on (served from the cache)"]
  assert [Outcome(runs.record(i)).state for i in range(7)] == expected
  code, out, err = _debug_runs(capsys, "--metadata", runs.path, "--pipeline", "wine")
  listed = [line for line in out.splitlines() if line.startswith("run ")]
  assert [line.split("  ", 2)[2] for line in listed] == expected, out


def test_the_reports_pushed_section_says_it_as_the_header_does(tmp_path):
  runs = Runs(tmp_path)
  serving_check_failed(runs, "run-1")
  pushed = render(runs.record()).split('<section id="pushed"')[1].split("</section>")[0]
  assert ("Not pushed: serving check failed (json: serving_default takes mean_radius, "
          "expected &#x27;mean radius&#x27;).") in pushed, pushed


def test_the_reports_check_section_is_titled_as_the_check_that_ran(tmp_path):
  """On a table ImageCheck runs the row check, and the report's section says
  so, as the step's own page does (it said "Image check" on every run)."""
  import json
  import os
  runs = Runs(tmp_path)
  runs.run("run-1", ("ImageCheck", "COMPLETE", {"result": ("Artifact", {})}))
  uri = runs.record().uri("ImageCheck", "result")
  os.rmdir(uri)  # the step's result is a file (components/image_check/result.py)
  with open(uri, "w") as f:
    json.dump({"checks": "row check", "images": {"train": 40, "eval": 21}, "findings": [],
               "classes": {}}, f)
  section = render(runs.record()).split('<section id="image_check"')[1].split("</section>")[0]
  assert section.startswith("><h2>Row check</h2>"), section
  assert "61 rows checked (eval: 21, train: 40)" in section, section

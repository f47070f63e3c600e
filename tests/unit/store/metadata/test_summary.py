"""store/metadata/summary.py: the local runner's last lines, from a run's
Outcome read from ML Metadata (tests/metadata_runs.py)."""

from store.metadata import summary
from store.metadata.outcome import Outcome
from tests.metadata_runs import SERVING_REASON, Runs, serving_check_failed


def test_a_failed_serving_check_is_said_before_no_model_pushed(tmp_path):
  runs = Runs(tmp_path)
  serving_check_failed(runs, "run-1")
  lines = summary.text(Outcome(runs.record())).splitlines()
  assert lines[0].startswith("model blessed: eval accuracy"), lines
  assert lines[-2:] == [f"serving check: FAILED, {SERVING_REASON}", "no model pushed"], lines


def test_a_run_that_recorded_nothing_pushed_nothing():
  assert summary.text(Outcome(None)) == Outcome(None).summary() == "no model pushed"

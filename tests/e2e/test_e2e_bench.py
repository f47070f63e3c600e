"""`python -m bench.e2e_bench` runs the stock TFX pipeline for real (TFX's
own components, as TFX's cifar10 example builds them) on a few photos
(JPEG, converted as a user converts them), and writes the JSON its report
reads. The stock pipeline is what no other test runs: the project's half of
the benchmark is local_runner.py, which every e2e test runs, and what the
benchmark prints from both halves (the table, the goals, the chart) is
tests/unit/bench/test_e2e_report.py's. Its figures are the benchmark's
business, not a test's."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.long]

TIMED = ("ImportExampleGen", "StatisticsGen", "Transform", "Trainer", "Evaluator")


def test_the_benchmark_runs_the_stock_pipeline_and_writes_its_json(tmp_path):
  json_path = tmp_path / "e2e.json"
  cmd = [sys.executable, "-m", "bench.e2e_bench", "--data", "photos", "--rows", "240",
         "--train-steps", "4", "--eval-steps", "1", "--out", str(tmp_path / "bench"),
         "--only", "stock", "--json", str(json_path)]
  done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
  assert done.returncode == 0, (f"expected exit 0, found {done.returncode}:\n"
                                f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
  result = json.loads(json_path.read_text())
  assert result["rows"] == 240 and result["data"] == "photos" and "project" not in result
  r = result["stock"]
  assert r["total_s"] > sum(r["components"][c] for c in TIMED) > 0, r
  assert r["peak_mb"] > 200, f"a TFX run in under 200 MB? {r['peak_mb']}"
  assert 0 < r["eval_accuracy"] <= 1, r
  missing = [c for c in TIMED + ("Pusher",) if c not in r["components"]]
  assert not missing, f"no time for {missing}: {r['components']}"
  assert "ServingCheck" not in r["components"] and "ImageCheck" not in r["components"], r
  # Each component's seconds, printed as the benchmark's --only prints them.
  assert '"Transform":' in done.stdout, done.stdout[-2000:]

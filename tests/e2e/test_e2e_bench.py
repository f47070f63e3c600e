"""`python -m bench.e2e_bench` runs as docs/performance.md shows it: both
pipelines, for real (TFX's stock components, then this project's through
local_runner.py), on a few photos (JPEG, converted as a user converts them),
and writes the JSON the issue fixes and the chart. Its figures are the
benchmark's business, not a test's. Photos rather than T: their stock
pipeline (cifar10's design) and data are the benchmark's newer half; T's
takes the same code with a table's stock module."""

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.e2e

TIMED = ("ImportExampleGen", "StatisticsGen", "Transform", "Trainer", "Evaluator")


def test_the_benchmark_runs_both_pipelines_and_writes_its_json_and_chart(tmp_path):
  json_path, png_path = tmp_path / "e2e.json", tmp_path / "e2e.png"
  cmd = [sys.executable, "-m", "bench.e2e_bench", "--data", "photos", "--rows", "240",
         "--train-steps", "4", "--eval-steps", "1", "--out", str(tmp_path / "bench"),
         "--json", str(json_path), "--plot", str(png_path)]
  done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
  assert done.returncode == 0, (f"expected exit 0, found {done.returncode}:\n"
                                f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
  result = json.loads(json_path.read_text())
  assert result["rows"] == 240 and result["data"] == "photos"
  for pipeline in ("stock", "project"):
    r = result[pipeline]
    assert r["total_s"] > sum(r["components"][c] for c in TIMED) > 0, r
    assert r["peak_mb"] > 200, f"{pipeline}: a TFX run in under 200 MB? {r['peak_mb']}"
    assert 0 < r["eval_accuracy"] <= 1, r
    missing = [c for c in TIMED + ("Pusher",) if c not in r["components"]]
    assert not missing, f"{pipeline}: no time for {missing}: {r['components']}"
  assert "ServingCheck" in result["project"]["components"]
  assert "ServingCheck" not in result["stock"]["components"]
  table = done.stdout
  assert "ImportExampleGen" in table and "images/s" in table and "total (wall)" in table, \
      table
  for goal in ("project/stock time", "no component slower than its stock counterpart",
               "eval accuracy differs by", "project/stock peak memory"):
    assert re.search(rf"^(met|NOT met): {goal}", table, re.M), f"no line for {goal}:\n{table}"
  # What the Trainers' pace is read against: the model alone.
  assert result["ceiling_images_per_s"] > 0, result
  assert "the model alone, on batches in memory" in table, table
  assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

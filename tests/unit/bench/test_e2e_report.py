"""bench/e2e_report.py on a recorded result: the table, the goal lines and
the chart a run of `python -m bench.e2e_bench` ends with. The benchmark's
pipelines themselves run in tests/e2e/test_e2e_bench.py (the stock one: the
project's pipeline runs in every other e2e test)."""

import copy

from bench import e2e_report

COMPONENTS = {"ImportExampleGen": 4.0, "StatisticsGen": 6.0, "Transform": 20.0,
              "Trainer": 30.0, "Evaluator": 12.0, "Pusher": 1.0}


def _results(project_scale: float = 0.35, accuracies=(0.80, 0.81)) -> dict:
  stock = {c: s for c, s in COMPONENTS.items()}
  project = {c: s * project_scale for c, s in COMPONENTS.items()}
  project.update(ServingCheck=2.0, ImageCheck=1.5)

  def side(components, total, peak, accuracy):
    return {"components": components, "total_s": total, "peak_mb": peak,
            "eval_accuracy": accuracy, "image_check": ["leak: 0 eval images [warn]"],
            "peak_mb_by_component": {c: peak * 0.9 for c in components}}
  return {"data": "photos", "rows": 240, "train_steps": 4, "ceiling_images_per_s": 900.0,
          "stock": side(stock, 80.0, 3000.0, accuracies[0]),
          "project": side(project, 80.0 * project_scale, 1200.0, accuracies[1])}


def test_the_table_shows_each_component_its_rate_and_the_totals():
  shown = e2e_report.table(_results())
  lines = shown.splitlines()
  assert "images/s" in lines[0], lines[0]
  (transform,) = [line for line in lines if line.startswith("Transform")]
  # 240 images in 20 s against 7 s: their rates, and the speed-up.
  assert "12.0" in transform and "34.3" in transform and "2.9x" in transform, transform
  (serving,) = [line for line in lines if line.startswith("ServingCheck")]
  assert serving.split()[1] == "-", f"the stock side has no ServingCheck: {serving}"
  assert any(line.startswith("total (wall)") for line in lines), shown
  assert "eval accuracy: stock 0.8000, project 0.8100" in shown, shown


def test_the_goals_are_met_when_the_project_is_fast_and_as_accurate():
  lines = e2e_report.goal_lines(_results())
  assert [line.split(":")[0] for line in lines[:4]] == ["met"] * 4, lines
  assert lines[0].startswith("met: project/stock time 0.35 (goal at most 0.40"), lines[0]
  assert any(line.startswith("  found: leak: 0 eval images") for line in lines), lines


def test_a_slower_project_and_a_worse_model_are_not_met_and_named():
  slow = _results(project_scale=1.5, accuracies=(0.95, 0.50))
  lines = e2e_report.goal_lines(slow)
  assert lines[0].startswith("NOT met: project/stock time 1.50"), lines[0]
  assert lines[1].startswith("NOT met: no component slower") and \
      "Trainer 45.0 s against 30.0 s" in lines[1], lines[1]
  assert lines[2].startswith("NOT met: eval accuracy differs by 0.4500"), lines[2]


def test_a_table_run_judges_memory_growth_against_the_earlier_run():
  results = _results()
  results["data"], results["rows"] = "T", 200_000
  earlier = copy.deepcopy(results)
  earlier["rows"], earlier["project"]["peak_mb"] = 5_000, 600.0
  lines = e2e_report.goal_lines(results, earlier)
  assert lines[-1].startswith("NOT met: project peak memory at 200,000 rows is 2.00x"), lines


def test_the_ceiling_line_sets_each_trainers_pace_against_the_model_alone():
  line = e2e_report.ceiling_line(_results())
  # 4 steps of 64 in 30 s (stock) and 10.5 s (project).
  assert line.startswith("the model alone, on batches in memory: 900.0 images/s"), line
  assert "stock's 8.5, project's 24.4" in line, line


def test_the_chart_is_a_png(tmp_path):
  path = tmp_path / "e2e.png"
  e2e_report.plot(_results(), str(path))
  assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

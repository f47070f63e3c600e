"""A run's last lines, as the local runner prints them: a view of its
`Outcome` (store/metadata/outcome.py), like the report, the notice and the
runs lists, so they say nothing it does not.

    the Trainer's notes (the warm start, the backbone's weights)
    what the image check and the drift check let the run go on with
    the served model's fall on the new span (ServedScore), if it fell
    model blessed|NOT blessed: eval <metric> <value> (needs <threshold>)
      the change against the served model, each refusal, each small slice
    serving check: passed|FAILED, ...
    pushed model: <directory> | no model pushed[: why the Pusher refused]
"""

from typing import List


def text(outcome) -> str:
  """The lines, joined."""
  from components.evaluator import gate
  from components.serving_check import check as serving_check
  served = outcome.served_score.get("line")  # ServedScore's verdict, if the model fell
  lines = (list(outcome.notes) + _image_lines(outcome.image_check)
           + _drift_lines(outcome.drift) + [served] * bool(served))
  if outcome.blessed is not None:
    verdict = "blessed" if outcome.blessed else "NOT blessed"
    value = "unknown" if outcome.value is None else f"{outcome.value:.4f}"
    lines.append(f"model {verdict}: eval {outcome.metric} {value}"
                 + (f" (needs {outcome.threshold})" if outcome.threshold else ""))
    lines += _change_lines(outcome.judged)
    lines += [f"  {r}" for r in outcome.reasons]
    lines += [f"  {line}" for line in gate.small_lines(outcome.judged.get("whole"),
                                                       list(outcome.slices))]
  if outcome.serving:
    lines.append(f"serving check: {serving_check.describe(outcome.serving)}")
  lines.append(f"pushed model: {outcome.pushed_dir}" if outcome.pushed_dir
               else f"no model pushed: {outcome.refused}" if outcome.refused
               else "no model pushed")
  return "\n".join(lines)


def _change_lines(judged: dict) -> List[str]:
  """The paired change against the served model, with its 95% interval."""
  if judged.get("change") is None:
    return []
  interval = (f", 95% interval {judged['change_low']:+.4f} to {judged['change_high']:+.4f}"
              if judged.get("change_low") is not None else "")
  return [f"  against the served model (version {judged['judged_against']}, "
          f"{judged['baseline_value']:.4f} on the same examples): change "
          f"{judged['change']:+.4f}{interval}"]


def _image_lines(image_check: dict) -> List[str]:
  """The kinds the image (or, on a table, row) check let the run go on with."""
  warned = [f"{f['kind']} {f['count']}" for f in image_check.get("findings", [])
            if f["decision"] == "warn"]
  checks = image_check.get("checks", "image check")
  return [f"{checks} (warn): {', '.join(warned)}; the report shows examples"] if warned else []


def _drift_lines(drift: dict) -> List[str]:
  if not drift.get("compared"):
    return []
  if not drift["drifted"]:
    return [f"drift: none beyond the thresholds ({drift['compared']})"]
  return ([f"drift (warn): the newest span moved beyond its thresholds "
           f"({drift['compared']}); the run went on (drift.action: warn)"]
          + [f"  {line}" for line in drift["drifted"]])

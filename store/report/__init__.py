"""The run report: one self-contained HTML file per run.

    write_report(metadata_path, pipeline_name) -> the file's path

Sections (each a <section> with this id): `dag` (each component's state and
duration), `statistics` (train and eval side by side, and images by decoded
size and format), `image_check` (copies within and across the splits,
unusable pictures and the classes' balance, with thumbnails), `drift`
(the newest span against the one before it),
`anomalies`, `training` (curves from the Trainer's
TensorBoard logs), `evaluation` (overall and per class, the blessing and its
thresholds, the baseline, each slice's verdict; for images, a few of each
class and the most confidently wrong), `serving` (the serving check: each check and
the latency) and `pushed`. Everything is read from ML Metadata
and the artifacts it points to, so `python -m commands.debug report` can write the
report of any earlier run again.
"""

import os
from typing import Dict, List, Optional

from components.evaluator import evaluation, gate, image_samples
from components.image_check import page as image_check
from store.metadata import run_record
from store.metadata import store as st
from store.metadata.outcome import Outcome
from store.report import dag, data, drift, images, serving, training, tuning
from store.report.html import Raw, esc, page, png, section, table
from trainer import warm_start


def report_path(metadata_path: str, run_id: str) -> str:
  """Where a run's report goes: `reports/` beside the metadata file."""
  safe = run_id.replace(":", "-")
  return os.path.join(os.path.dirname(os.path.abspath(metadata_path)), "reports",
                      f"{safe}.html")


def write_report(metadata_path: str, pipeline_name: str,
                 upstream: Optional[Dict[str, List[str]]] = None,
                 run_id: Optional[str] = None, path: Optional[str] = None) -> str:
  """Writes the report of a run (default: the latest) and returns its path.

  Args:
    metadata_path: the run's ML Metadata SQLite file.
    pipeline_name: the pipeline whose run it is.
    upstream: node -> its upstream nodes, in pipeline order, when the caller
      has the pipeline (then components that did not run show as such);
      otherwise the DAG is read from ML Metadata.
    run_id: a run id (or a unique prefix); default: the latest run.
    path: where to write; default: `report_path`.

  Raises:
    StoreError: the metadata file is missing, foreign, or has no such run.
  """
  store = st.open_store(metadata_path)
  st.check_pipeline(store, metadata_path, pipeline_name)
  run = st.find_run(store, pipeline_name, run_id)
  path = path or report_path(metadata_path, run.id)
  text = render(run_record.from_store(
      store, pipeline_name, run, upstream or run_record.upstream_from_store(store, run)))
  os.makedirs(os.path.dirname(path), exist_ok=True)
  # Written whole, then renamed: a reader never sees half a report.
  with open(path + ".tmp", "w", encoding="utf-8") as f:
    f.write(text)
  os.replace(path + ".tmp", path)
  return path


def render(run: run_record.RunRecord) -> str:
  """The report's HTML page."""
  decl = run.declaration()
  outcome = Outcome(run)
  checked = outcome.serving_check
  sections = [
      section("dag", "Components", [dag.svg(
          run.upstream, {n: r.state for n, r in run.nodes.items()},
          {n: r.seconds for n, r in run.nodes.items()})] + _node_table(run)),
      section("statistics", "Data statistics",
              data.statistics_section(data.load_statistics(
                  run.splits("StatisticsGen", "statistics")))
              + ["<h3>Images</h3>"]
              + data.images_section(run.splits("ImportExampleGen", "examples"), decl)),
      section("image_check", image_check.title(outcome.image_check), image_check.section_parts(
          outcome.image_check, "ImageCheck" in run.nodes)),
      section("drift", "Drift from the earlier span",
              drift.section_parts(outcome.drift, "DriftGate" in run.nodes)),
      section("anomalies", "Anomalies", data.anomalies_section(
          data.load_anomalies(run.splits("ExampleValidator", "anomalies")),
          ran="ExampleValidator" in run.nodes)),
      *([section("tuning", "Hyperparameter search", tuning.section_parts(
          tuning.load(run.uri("Tuner", "tuner_results"))))] if "Tuner" in run.nodes else []),
      section("training", "Training", _training(run.uri("Trainer", "model_run"))),
      section("evaluation", "Evaluation", _evaluation(run, outcome, decl)),
      section("serving", "Serving check", serving.section_parts(checked)),
      section("pushed", "Pushed model", _pushed(run, outcome)),
      *([section("served", "The served model, span by span", _served(run, outcome))]
        if "ServedScore" in run.nodes else []),
  ]
  subtitle = (f"pipeline {run.pipeline} · run {run.run_id} · started "
              f"{run.started} · {outcome.state}"
              + (f" · a partial run reusing {run.parent}" if run.parent else ""))
  return page(f"Run report: {run.pipeline}", subtitle, sections)


def _served(run: run_record.RunRecord, outcome: Outcome) -> List[str]:
  """The served model's metric on each span scored (components/served_score/)."""
  from components.served_score import chart, score
  serving_dir = run.exec_properties.get(("ServedScore", "serving_dir"))
  return [chart.figure(score.said(outcome.served_score), serving_dir)] if serving_dir else []


def _node_table(run: run_record.RunRecord) -> List[str]:
  rows = [[n, r.state, "" if r.seconds is None else f"{r.seconds:.1f}", r.id]
          for n, r in run.nodes.items()]
  return [table(["component", "state", "seconds", "execution id"], rows, numeric=(2, 3))]


def _training(model_run: Optional[str]) -> List[str]:
  if not model_run:
    return ['<p class="note">The Trainer did not run in this run.</p>']
  # What the Trainer decided: the warm start, a resume from a checkpoint.
  notes = [f"<p>{esc(note)}</p>" for note in warm_start.read_notes(model_run)]
  curves = training.read_curves(model_run)
  if not curves:
    return notes + [f'<p class="note">No TensorBoard logs under {esc(model_run)}.</p>']
  charts = [png(training.chart(metric, per_split), f"{metric} per epoch")
            for metric, per_split in sorted(curves.items())]
  return notes + ['<div class="side">' + "".join(charts) + "</div>",
          f"<p>TensorBoard logs: <code>{esc(model_run)}</code>; open them with "
          f"<code>tensorboard --logdir {esc(model_run)}</code>.</p>"]


def _evaluation(run: run_record.RunRecord, outcome: Outcome, decl) -> List[str]:
  result_uri = run.uri("Evaluator", "evaluation")
  if not result_uri:
    return ['<p class="note">The Evaluator did not run in this run.</p>']
  results = evaluation.load(result_uri)
  blessed = bool(outcome.blessed)
  limits = evaluation.thresholds(run.exec_properties.get(("Evaluator", "eval_config")))
  parts = [f'<p class="{"ok" if blessed else "bad"}">'
           f'{"Blessed" if blessed else "NOT blessed"}.</p>']
  if limits:
    parts.append("<p>Thresholds (overall): " + "; ".join(
        f"{esc(name)} {esc(words)}" for name, words in limits.items()) + ".</p>")
  judged = outcome.judged
  for line in outcome.reasons:
    parts.append(f'<p class="bad">{esc(line)}</p>')
  baseline = run.output("BaselineModel", "model")
  source = baseline and baseline.props.get("source_model")
  overall = results.get((), {})
  if source and "baseline" in overall:
    parts.append(f"<p>Compared with the baseline: <code>{esc(source)}</code>"
                 " (the latest pushed model).</p>")
  else:
    parts.append('<p class="note">No baseline: nothing was served yet, so the '
                 "value threshold alone decided.</p>")
  metrics = sorted(set().union(*(m.keys() for m in overall.values()))) if overall else []
  models = [m for m in ("candidate", "baseline", "change") if m in overall]
  parts.append("<h3>Overall</h3>" + table(
      ["metric"] + models,
      [[name] + [_number(name, overall[m].get(name)) for m in models] for name in metrics],
      numeric=range(1, len(models) + 1)))
  if judged.get("change") is not None and judged.get("change_low") is not None:
    parts.append(f"<p>Against the served model, on the same examples: {esc(judged['metric'])}"
                 f" change {judged['change']:+.4f}, 95% interval "
                 f"{judged['change_low']:+.4f} to {judged['change_high']:+.4f}.</p>")
  if (judged.get("whole") or {}).get("note"):
    parts.append(f"<p>{esc(judged['whole']['note'])}</p>")
  parts += _slices(judged.get("slices", []))
  return parts + _per_class(result_uri, decl) + images.parts(image_samples.read(result_uri))


def _per_class(result_uri: str, decl) -> List[str]:
  """Per class, from the candidate's confusion matrix on the eval split."""
  classes = decl.label.class_names() if decl else []
  counts = evaluation.load_matrices(result_uri)["counts"] if classes else {}
  if not counts:
    return []
  rows = [[name, f"{examples:.0f}", _number("", recall), _number("", precision)]
          for name, examples, recall, precision in evaluation.per_class(counts, classes)]
  return [f"<h3>Per class ({esc(decl.label.name)})</h3>" + table(
      [decl.label.name, "examples", "accuracy (recall)", "precision"], rows,
      numeric=(1, 2, 3))]


def _slices(rows: List[dict]) -> List[str]:
  """The declared slices, each judged on its evidence (components/evaluator/gate.py)."""
  if not rows:
    return []
  return ["<h3>Slices</h3>" + table(
      ["slice", "examples", "candidate", "served", "threshold", "max change", "verdict"],
      [[row["slice"], str(row["examples"]), _number("", row["value"]),
        _number("", row["served"]), f"{row['threshold']:g}", f"{row['max_change']:g}",
        gate.verdict_words(row)] for row in rows], numeric=range(1, 6))]


def _number(metric: str, value) -> str:
  if value is None:
    return ""
  return f"{value:.0f}" if "count" in metric else f"{value:.4f}"


def _pushed(run: run_record.RunRecord, outcome: Outcome) -> List[str]:
  if run.output("Pusher", "pushed_model") is None:
    return ['<p class="note">The Pusher did not run in this run.</p>']
  if not outcome.pushed_dir:  # in the words of every other view (Outcome.push_line)
    said = outcome.push_line()
    return [f'<p class="bad">{esc(said[:1].upper() + said[1:])}.</p>']
  where = outcome.pushed_dir
  cached = run.nodes["Pusher"].state == "CACHED"
  return [table(["pushed to", "version", "this run"],
                [[Raw(f"<code>{esc(where)}</code>"), os.path.basename(where),
                  "already pushed by an earlier run (cached)" if cached else "pushed now"]])]

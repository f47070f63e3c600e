"""End to end on the bundled digits: the real pipeline, with LocalDagRunner.

Runs `local_runner.py` as a user does, then checks ML Metadata, the pushed
SavedModel (loaded the way TF Serving loads it), and caching on re-runs.
"""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from debug import outcome
from debug import store as st
from tests.conftest import REPO

pytestmark = pytest.mark.e2e

TRAINING_NODES = ["ImportExampleGen", "CuratedSchema", "StatisticsGen",
                  "ExampleValidator", "AnomaliesGate", "Transform", "Trainer"]
ALL_NODES = TRAINING_NODES + ["BaselineModel", "Evaluator", "Pusher"]


def run_local(*args):
  """Runs local_runner.py in a fresh process; returns (exit code, stdout, stderr).

  The environment is the user's: without the Keras choice that importing
  `components` made in this test process.
  """
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  proc = subprocess.run([sys.executable, os.path.join(REPO, "local_runner.py"), *args],
                        capture_output=True, text=True, timeout=1200, env=env)
  return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
  root = tmp_path_factory.mktemp("e2e")
  args = ["--output-dir", str(root / "out"), "--data-root", str(root / "data")]
  code, out, err = run_local(*args)
  assert code == 0, err[-3000:]
  return {"args": args, "root": root, "stdout": out, "stderr": err,
          "metadata": str(root / "out" / "digits" / "metadata.sqlite"),
          "serving": str(root / "out" / "digits" / "serving")}


def _executions_per_node(metadata_path):
  store = st.open_store(metadata_path)
  return {ctx.name.split(".", 1)[1]: store.get_executions_by_context(ctx.id)
          for ctx in store.get_contexts_by_type("node")}


def test_every_component_ran_once_and_the_model_was_blessed_and_pushed(digits_run):
  per_node = _executions_per_node(digits_run["metadata"])
  assert sorted(per_node) == sorted(ALL_NODES)
  for node, executions in per_node.items():
    assert len(executions) == 1, node
    assert executions[0].last_known_state == st.STATE.COMPLETE, node
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert result.blessed is True
  assert result.value >= 0.9
  last_line = digits_run["stdout"].strip().splitlines()[-1]
  assert last_line == f"pushed model: {result.pushed_dir}"
  assert os.path.dirname(result.pushed_dir) == digits_run["serving"]
  assert os.path.isfile(os.path.join(result.pushed_dir, "saved_model.pb"))


def test_a_run_is_quiet_one_line_per_component_then_the_outcome(digits_run):
  lines = digits_run["stdout"].strip().splitlines()
  assert len(lines) <= 15, "expected at most 15 lines, found:\n" + digits_run["stdout"]
  per_component = {line.split()[0]: line.split()[1] for line in lines[:len(ALL_NODES)]}
  assert per_component == {n: "COMPLETE" for n in ALL_NODES}, lines
  assert lines[len(ALL_NODES)].startswith("report: ")
  assert lines[-2].startswith("model blessed: eval accuracy "), lines
  # Nothing from TensorFlow, absl, Beam or Google's clients: no warnings,
  # no CUDA probing, no deprecations.
  assert digits_run["stderr"].strip() == "", digits_run["stderr"][-3000:]


def test_debug_commands_show_runs_artifacts_and_lineage(digits_run):
  from tests.test_debug import debug_cli
  where = ["--metadata", digits_run["metadata"]]
  store = st.open_store(digits_run["metadata"])
  (run,) = st.runs(store, "digits")[:1]

  code, out, err = debug_cli("runs", *where)
  assert code == 0, err
  assert out.splitlines()[0].startswith(f"run {run.id}  started ")
  for node in ALL_NODES:
    execution = run.nodes[node].execution.id
    assert any(line.split()[:2] == [node, "COMPLETE"] and line.endswith(f"execution {execution}")
               for line in out.splitlines()), (node, out)

  code, out, err = debug_cli("artifacts", *where, "--run", run.id, "--node", "Evaluator")
  assert code == 0, err
  rows = [line.split() for line in out.splitlines()[2:]]
  assert {(r[0], r[1], r[2]) for r in rows} == {
      ("in", "model", "Model"), ("in", "baseline_model", "Model"),
      ("in", "examples", "Examples"), ("out", "evaluation", "ModelEvaluation"),
      ("out", "blessing", "ModelBlessing")}, out
  assert out.count("[span 0]") == 1 and "[blessed]" in out, out

  code, out, err = debug_cli("lineage", *where)
  assert code == 0, err
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert out.splitlines()[0] == f"pushed model {result.pushed_dir}"
  for producer in ("Pusher", "Evaluator", "Trainer", "Transform", "ImportExampleGen",
                   "CuratedSchema", "BaselineModel"):
    assert f"made by {producer} (execution " in out, (producer, out)
  assert "examples: Examples " in out and "(span 0)" in out
  assert "transform_graph: TransformGraph " in out and "schema: Schema " in out
  assert "model_blessing: ModelBlessing " in out and "(blessed)" in out
  assert "baseline_model: Model " in out

  code, out, err = debug_cli("artifacts", *where, "--node", "Trainr")
  assert code == 2 and "'Trainr' did not run in run " in err, err


def test_the_run_report_opens_in_a_real_browser_with_every_section(digits_run, tmp_path):
  from tests.browser import Page
  (line,) = [x for x in digits_run["stdout"].splitlines() if x.startswith("report: ")]
  path = line[len("report: "):]
  with Page(path) as page:
    page.screenshot(str(tmp_path / "report.png"))
    sections = page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)")
    images = page.evaluate("[...document.images].map(i => [i.alt, i.complete, "
                           "i.naturalWidth, i.naturalHeight])")
    states = page.evaluate("Object.fromEntries([...document.querySelectorAll('g.node')]"
                           ".map(g => [g.dataset.node, g.dataset.state]))")
    text = page.evaluate("Object.fromEntries([...document.querySelectorAll('section')]"
                         ".map(s => [s.id, s.innerText]))")
    errors = page.errors
  assert sections == ["dag", "statistics", "anomalies", "training", "evaluation", "pushed"]
  assert sorted(alt for alt, *_ in images) == ["accuracy per epoch", "loss per epoch"], images
  for alt, complete, width, height in images:
    assert complete and width > 0 and height > 0, (alt, width, height)
  assert errors == [], errors
  assert states == {n: "COMPLETE" for n in ALL_NODES}
  assert "train: 1474 examples, eval: 323 examples" in text["statistics"]
  assert "png 500" in text["statistics"] and "8x8x1" in text["statistics"]
  assert "No anomalies" in text["anomalies"]
  assert "Blessed." in text["evaluation"] and ">= 0.9" in text["evaluation"]
  per_class = text["evaluation"].split("Per class (label)")[1]
  assert all(f"\n{digit}\t" in per_class for digit in range(10)), per_class
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert result.pushed_dir in text["pushed"]
  assert (tmp_path / "report.png").stat().st_size > 10_000


def test_pushed_model_serves_serialized_eval_examples_accurately(digits_run):
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  serve = tf.saved_model.load(result.pushed_dir).signatures["serving_default"]
  files = glob.glob(str(digits_run["root"] / "data" / "eval" / "*.tfrecord.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  assert probs.shape == (len(records), 10)
  accuracy = float((probs.argmax(axis=1) == labels).mean())
  assert len(records) > 300
  assert accuracy >= 0.95


def test_rerun_on_unchanged_inputs_is_served_from_cache(digits_run):
  """A scheduled rerun with nothing new: no work, exit 0, and it says so."""
  first = outcome.read_outcome(digits_run["metadata"], "digits")
  code, out, err = run_local(*digits_run["args"])
  assert code == 0, err[-3000:]
  second = outcome.read_outcome(digits_run["metadata"], "digits")
  # The model the first run pushed is not the baseline of its own rerun
  # (components/baseline.py), so even BaselineModel, and with it the Trainer's
  # warm start, comes from the cache.
  assert second.states == {n: "CACHED" for n in ALL_NODES}
  assert second.pushed_dir == first.pushed_dir
  assert os.listdir(digits_run["serving"]) == [os.path.basename(first.pushed_dir)]
  assert "no new data: all data already went through this pipeline" in out, out
  assert out.strip().endswith(f"served model: {first.pushed_dir}"), out


def test_model_below_the_threshold_is_not_blessed_and_not_pushed(digits_run):
  before = sorted(os.listdir(digits_run["serving"]))
  before_pushed = os.path.join(digits_run["serving"], before[-1])
  # The served model is this run's baseline and warm start (the setting
  # changed). Eight steps at a learning rate of 0.9 wreck those weights, so
  # the model cannot clear 0.9999 (a well-trained one can: 323 of 323 eval
  # digits happens).
  code, out, err = run_local(*digits_run["args"], "--min-accuracy", "0.9999",
                             "--train-steps", "8", "--train", "learning_rate=0.9")
  assert code == 1, err[-3000:]
  result = outcome.read_outcome(digits_run["metadata"], "digits")
  assert result.states["Evaluator"] == "COMPLETE" and result.states["Pusher"] == "COMPLETE"
  # New training settings re-run the Trainer, and only what follows it:
  # Transform's cache key holds none of them.
  assert result.states["Trainer"] == "COMPLETE" and result.states["Transform"] == "CACHED", \
      result.states
  assert result.value < 0.9999
  assert result.blessed is False and result.pushed_dir is None
  assert "model NOT blessed: eval accuracy" in out
  assert f"warm start: from {before_pushed}" in out, out
  assert any("sparse_categorical_accuracy value" in r and "0.9999" in r
             for r in result.reasons), result.reasons
  assert out.strip().endswith("no model pushed")
  assert sorted(os.listdir(digits_run["serving"])) == before


def test_convert_then_run_needs_no_hand_editing(tmp_path):
  """Raw-pixel digits from NumPy, converted to plain (uncompressed) TFRecords,
  then the pipeline on them as is."""
  from cli.main import main as tfrecords
  from convert.digits import load_images
  images, labels = load_images()
  images = images[..., None]
  np.savez(tmp_path / "digits.npz", images=images, labels=labels,
           ink=(images > 0).mean(axis=(1, 2, 3)).astype(np.float32))
  assert tfrecords(["convert", "arrays", str(tmp_path / "digits.npz"), "--output",
                    str(tmp_path / "raw_digits"), "--eval-percent", "20",
                    "--compression", "NONE"]) == 0
  code, out, err = run_local("--dataset", str(tmp_path / "raw_digits" / "dataset.yaml"),
                             "--output-dir", str(tmp_path / "runs"), "--train-steps", "400")
  assert code == 0, err[-3000:]
  result = outcome.read_outcome(str(tmp_path / "runs" / "raw_digits" / "metadata.sqlite"),
                                "raw_digits")
  assert result.blessed and result.value >= 0.9
  assert out.strip().endswith(f"pushed model: {result.pushed_dir}")


def test_partial_run_retrains_alone_after_a_hyperparameter_change(digits_run):
  """The README's recipe: change a setting, rerun the Trainer alone (with -v)."""
  def real_executions(store):
    """node -> ids of the executions that really ran (not reuses)."""
    return {ctx.name.split(".", 1)[1]: {e.id for e in store.get_executions_by_context(ctx.id)
                                        if e.last_known_state != st.STATE.CACHED}
            for ctx in store.get_contexts_by_type("node")}

  before = real_executions(st.open_store(digits_run["metadata"]))
  code, out, err = run_local(*digits_run["args"], "--from-node", "Trainer",
                             "--to-node", "Trainer", "--train", "learning_rate=0.003", "-v")
  assert code == 0, err[-3000:]
  after = real_executions(st.open_store(digits_run["metadata"]))
  new_trainer = after["Trainer"] - before["Trainer"]
  assert len(new_trainer) == 1, (before["Trainer"], after["Trainer"])
  upstream = TRAINING_NODES[:-1]
  assert {n: after[n] for n in upstream} == {n: before[n] for n in upstream}, \
      "a component upstream of the Trainer executed again"
  latest = st.runs(st.open_store(digits_run["metadata"]), "digits")[-1]
  assert latest.nodes["Trainer"].execution.id in new_trainer
  assert {n: latest.nodes[n].state for n in upstream} == {n: "CACHED" for n in upstream}
  assert "Evaluator" not in latest.nodes and "Pusher" not in latest.nodes
  assert latest.parent is not None, "a partial run records the run it reused"
  # -v: the libraries' logs are back (TFX's own progress, at INFO).
  assert "Component Trainer is running." in err, err[-2000:]

  code, _, err = run_local(*digits_run["args"], "--to-node", "Pushr")
  assert code == 2
  (line,) = [x for x in err.splitlines() if x.startswith("error: --to-node: expected one of ")]
  listed = line.split("expected one of ", 1)[1].split(", found")[0].split(", ")
  assert sorted(listed) == sorted(ALL_NODES), line
  assert line.endswith("found 'Pushr'"), line

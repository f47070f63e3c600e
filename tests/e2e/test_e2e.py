"""End to end on the bundled digits: the real pipeline, with LocalDagRunner.

Runs `local_runner.py` as a user does, four times in one home (fixtures,
each building on the one before): the first run, a run that declares a
latency budget no model meets, a run with wrecking training settings, and a
partial run. Checks ML Metadata, the pushed
SavedModel (loaded the way TF Serving loads it), the debug commands and the
report in a real browser. A rerun with nothing new is test_retraining's.
"""

import glob
import json
import os
import time

import numpy as np
import pytest
import tensorflow as tf
import yaml

from store.metadata import outcome, serving_result
from store.metadata import store as st
from tests.conftest import DIGITS_SCHEMA, DIGITS_YAML
from tests.runs import (
  ALL_NODES,
  TRAINING_NODES,
  debug_cli,
  module_cli,
  real_executions,
  run_local,
  serve_accuracy,
  start_local,
)

pytestmark = [pytest.mark.e2e, pytest.mark.long]


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
  """The Quick start's run on the bundled digits, in a fresh home."""
  root = tmp_path_factory.mktemp("e2e")
  args = ["--output-dir", str(root / "out"), "--data-root", str(root / "data")]
  code, out, err = run_local(*args)
  assert code == 0, err[-3000:]
  metadata = str(root / "out" / "digits" / "metadata.sqlite")
  return {"args": args, "root": root, "stdout": out, "stderr": err, "metadata": metadata,
          "serving": str(root / "out" / "digits" / "serving"),
          "run_id": st.runs(st.open_store(metadata), "digits")[-1].id,
          "outcome": outcome.read_outcome(metadata, "digits")}


@pytest.fixture(scope="module")
def stale_baseline_partial_run(digits_run):
  """Right after the first push: a partial run from the Trainer, whose
  BaselineModel last ran when nothing was served. A setting that always
  worsens the model: 25 steps at 150 times the learning rate (0.3) throw
  the warm start's weights away, to chance (0.093 measured, against 0.997
  served), above the threshold asked (0.01) and far below the served model
  (allowed drop 0.001). Fifteen times the rate dropped 0.07 to 0.7, five
  times once nothing, which blessed the model. While it runs, a second run
  in the same folder is started."""
  home = os.path.dirname(digits_run["metadata"])
  before = sorted(os.listdir(digits_run["serving"]))
  first = start_local(*digits_run["args"], "--from-node", "Trainer", "--train-steps", "25",
                      "--train", "learning_rate=0.3", "--min-accuracy", "0.01",
                      "--max-change", "0.001")
  lock = os.path.join(home, "run.lock")
  while first.poll() is None and not (
      os.path.exists(lock) and open(lock).read().startswith(f"pid {first.pid},")):
    time.sleep(0.2)
  second = run_local(*digits_run["args"])
  out, err = first.communicate(timeout=1200)
  return {"code": first.returncode, "stdout": out, "stderr": err, "serving_before": before,
          "second": second, "pid": first.pid,
          "outcome": outcome.read_outcome(digits_run["metadata"], "digits")}


@pytest.fixture(scope="module")
def over_budget_run(digits_run, stale_baseline_partial_run):
  """Then the same run, its declaration adding a p99 latency budget of a
  microsecond at batch 1: only the serving check and the Pusher run again."""
  with open(DIGITS_YAML) as f:
    raw = yaml.safe_load(f)
  raw["data"]["root"] = str(digits_run["root"] / "data")
  raw["schema"] = DIGITS_SCHEMA
  raw["serving"] = {"p99_ms": {"batch_1": 0.001}}
  path = digits_run["root"] / "over_budget.yaml"
  path.write_text(yaml.safe_dump(raw, sort_keys=False))  # the splits' order is a cache key
  before = sorted(os.listdir(digits_run["serving"]))
  code, out, err = run_local("--dataset", str(path), *digits_run["args"][:2])
  return {"code": code, "stdout": out, "stderr": err, "serving_before": before,
          "outcome": outcome.read_outcome(digits_run["metadata"], "digits"),
          "run": st.runs(st.open_store(digits_run["metadata"]), "digits")[-1]}


@pytest.fixture(scope="module")
def below_threshold_run(digits_run, over_budget_run):
  """Then a run whose new training settings wreck the served model's weights
  (eight steps at a learning rate of 0.9, from the warm start), against a
  threshold of 0.9999 that a well-trained model can clear (323 of 323 eval
  digits happens)."""
  before = sorted(os.listdir(digits_run["serving"]))
  code, out, err = run_local(*digits_run["args"], "--min-accuracy", "0.9999",
                             "--train-steps", "8", "--train", "learning_rate=0.9")
  return {"code": code, "stdout": out, "stderr": err, "serving_before": before,
          "outcome": outcome.read_outcome(digits_run["metadata"], "digits")}


@pytest.fixture(scope="module")
def partial_run(below_threshold_run, digits_run):
  """Then the docs' partial-run recipe: a changed setting, the Trainer alone, -v."""
  before = real_executions(digits_run["metadata"])
  code, out, err = run_local(*digits_run["args"], "--from-node", "Trainer",
                             "--to-node", "Trainer", "--train", "learning_rate=0.003", "-v")
  return {"code": code, "stdout": out, "stderr": err, "before": before,
          "after": real_executions(digits_run["metadata"]),
          "latest": st.runs(st.open_store(digits_run["metadata"]), "digits")[-1]}


def _run(digits_run) -> st.Run:
  """The first run, as ML Metadata recorded it, whatever ran after it."""
  (run,) = [r for r in st.runs(st.open_store(digits_run["metadata"]), "digits")
            if r.id == digits_run["run_id"]]
  return run


def test_every_component_ran_and_the_model_was_blessed_and_pushed(digits_run):
  run = _run(digits_run)
  assert {n: r.state for n, r in run.nodes.items()} == {n: "COMPLETE" for n in ALL_NODES}
  result = digits_run["outcome"]
  assert result.blessed is True
  assert result.value >= 0.9
  last_line = digits_run["stdout"].strip().splitlines()[-1]
  assert last_line == f"pushed model: {result.pushed_dir}"
  assert os.path.dirname(result.pushed_dir) == digits_run["serving"]
  assert os.path.isfile(os.path.join(result.pushed_dir, "saved_model.pb"))


def test_a_run_is_quiet_one_line_per_component_then_the_outcome(digits_run):
  everything = digits_run["stdout"].strip().splitlines()
  # On a busy machine a Trainer past a minute adds a progress line a minute
  # (and where its TensorBoard logs are): still at most 20 lines in all.
  assert len(everything) <= 20, digits_run["stdout"]
  lines = [x for x in everything if not x.startswith("  Trainer: step ")
           and not x.startswith("training took ") and x.split()[1:2] != ["running"]]
  # A line per component, the report, then the outcome: the warm start, the
  # blessing, the serving check, the push.
  assert len(lines) <= len(ALL_NODES) + 5, \
      f"expected at most {len(ALL_NODES) + 5} lines, found:\n" + digits_run["stdout"]
  per_component = {line.split()[0]: line.split()[1] for line in lines[:len(ALL_NODES)]}
  assert per_component == {n: "COMPLETE" for n in ALL_NODES}, lines
  assert lines[len(ALL_NODES)].startswith("report: ")
  assert lines[-3].startswith("model blessed: eval accuracy "), lines
  assert lines[-2].startswith("serving check: passed (batch 1 p50 "), lines
  # Nothing from TensorFlow, absl, Beam or Google's clients: no warnings,
  # no CUDA probing, no deprecations.
  assert digits_run["stderr"].strip() == "", digits_run["stderr"][-3000:]


def test_debug_commands_show_runs_artifacts_and_lineage(digits_run):
  where = ["--metadata", digits_run["metadata"]]
  run = _run(digits_run)

  code, out, err = debug_cli("runs", *where)
  assert code == 0, err
  # What the run did, not its steps' states: it pushed this version.
  pushed = f"pushed version {os.path.basename(digits_run['outcome'].pushed_dir)}"
  assert any(line.startswith(f"run {run.id}  started ") and line.endswith(pushed)
             for line in out.splitlines()), out
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
      # The columns TFMA parses: the label and the sliced features.
      ("in", "schema", "Schema"),
      ("out", "blessing", "ModelBlessing"),
      # For Kubeflow's run page (components/ui_artifacts.py).
      ("out", "metrics", "system.Metrics"),
      ("out", "classification_metrics", "system.ClassificationMetrics")}, out
  assert out.count("[span 0]") == 1 and "[blessed]" in out, out

  code, out, err = debug_cli("lineage", *where)
  assert code == 0, err
  result = digits_run["outcome"]
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

  # The serving dir's versions, with the judgement the Pusher recorded
  # beside the version: no ML Metadata needed.
  code, out, err = module_cli("commands.serving", "versions", "--serving-dir", digits_run["serving"])
  assert code == 0, err
  version = os.path.basename(result.pushed_dir.rstrip("/"))
  assert out.startswith(f"{version}  served  pushed "), out
  assert f"trained on train  accuracy {result.value:.4f}" in out, (out, result.value)
  card = os.path.join(result.pushed_dir, "assets.extra", "model_card.md")
  assert out.rstrip().endswith(f"card: {card}"), out


def test_every_pushed_version_has_its_model_card(digits_run):
  """The card beside the version: each section a user looks for, with this
  run's numbers in it."""
  result = digits_run["outcome"]
  folder = os.path.join(result.pushed_dir, "assets.extra")
  with open(os.path.join(folder, "model_card.md"), encoding="utf-8") as f:
    card = f.read()
  for section in ("Model", "Trained on", "Settings", "Evaluation", "Serving check",
                  "Drift against the previous span", "Lineage"):
    assert f"\n## {section}\n" in card, (section, card)
  assert "- pipeline: digits" in card and "- started by: local_runner.py, by " in card
  assert "- replaces: nothing: no model was served" in card, card
  assert "- splits: train" in card and "- split train: " in card and " examples" in card
  assert f"- accuracy: {result.value:.4f} on the eval examples" in card, card
  assert "- passed (batch 1 p50" in card, card  # the serving check's figures
  assert "| model | " in card and "| model_blessing | " in card, card
  with open(os.path.join(folder, "model_card.html"), encoding="utf-8") as f:
    page = f.read()
  assert "<h2>Evaluation</h2>" in page and f"{result.value:.4f}" in page


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
  assert sections == ["dag", "statistics", "image_check", "drift", "anomalies", "training",
                      "evaluation", "serving", "pushed"]
  alts = [alt for alt, *_ in images]
  assert sorted(a for a in alts if "per epoch" in a) == [
      "accuracy per epoch", "loss per epoch"], images
  # The digits are images: four eval images of each class, then those the
  # candidate got most confidently wrong (all 323 answered), each captioned.
  assert sorted(a for a in alts if a.startswith("class ")) == sorted(
      f"class {digit}" for digit in range(10) for _ in range(4)), alts
  wrong = [a for a in alts if a.startswith("true ")]
  missed = round((1 - digits_run["outcome"].value) * 323)
  assert len(wrong) == min(12, missed), (wrong, missed)
  assert all(a.split(", predicted ")[0][5:] != a.split(", predicted ")[1] for a in wrong)
  assert "Most confidently wrong, of 323 eval images" in text["evaluation"]
  for alt, complete, width, height in images:
    assert complete and width > 0 and height > 0, (alt, width, height)
  assert all(width == 64 for alt, _, width, _ in images if alt not in (
      "accuracy per epoch", "loss per epoch")), images
  assert errors == [], errors
  assert states == {n: "COMPLETE" for n in ALL_NODES}
  assert "train: 1474 examples, eval: 323 examples" in text["statistics"]
  assert "png 500" in text["statistics"] and "8x8x1" in text["statistics"]
  assert "No anomalies" in text["anomalies"]
  # The bundled digits have no copies, no unusable picture, no rare class.
  assert "1797 images checked (eval: 323, train: 1474)." in text["image_check"], \
      text["image_check"]
  assert "Nothing found" in text["image_check"], text["image_check"]
  # What the Trainer decided (and, after an interruption, "resumed from step ...").
  assert "warm start: none, no model is served yet" in text["training"], text["training"]
  assert "No drift check in this run: the data has no spans" in text["drift"], text["drift"]
  assert "Blessed." in text["evaluation"] and ">= 0.9" in text["evaluation"]
  per_class = text["evaluation"].split("Per class (label)")[1]
  assert all(f"\n{digit}\t" in per_class for digit in range(10)), per_class
  assert "Passed: the model loads in a fresh process and serves 256 eval examples" \
      in text["serving"], text["serving"]
  assert "p99" in text["serving"] and "probabilities float32 [None, 10]" in text["serving"]
  assert digits_run["outcome"].pushed_dir in text["pushed"]
  assert (tmp_path / "report.png").stat().st_size > 10_000


def test_pushed_model_serves_serialized_eval_examples_accurately(digits_run):
  files = glob.glob(str(digits_run["root"] / "data" / "eval" / "*.tfrecord.gz"))
  accuracy, served = serve_accuracy(digits_run["outcome"].pushed_dir, files)
  assert served > 300, f"expected the 323 eval digits, found {served}"
  assert accuracy >= 0.95, f"expected >= 0.95 served accuracy, found {accuracy}"


def test_a_changed_setting_retrains_and_transform_comes_from_the_cache(
    digits_run, below_threshold_run):
  states = below_threshold_run["outcome"].states
  # Transform's cache key holds none of the training settings; the Trainer's does.
  assert states["Transform"] == "CACHED" and states["Trainer"] == "COMPLETE", states
  assert states["Evaluator"] == "COMPLETE" and states["Pusher"] == "COMPLETE", states
  # The served model is this run's baseline and warm start (the setting changed).
  assert f"warm start: from {digits_run['outcome'].pushed_dir}" in \
      below_threshold_run["stdout"], below_threshold_run["stdout"]


def test_a_model_below_the_threshold_is_not_blessed_and_not_pushed(
    digits_run, below_threshold_run):
  assert below_threshold_run["code"] == 1, below_threshold_run["stderr"][-3000:]
  result, out = below_threshold_run["outcome"], below_threshold_run["stdout"]
  assert result.value < 0.9999
  assert result.blessed is False and result.pushed_dir is None
  assert "model NOT blessed: eval accuracy" in out
  assert any("sparse_categorical_accuracy value" in r and "0.9999" in r
             for r in result.reasons), result.reasons
  assert out.strip().endswith("no model pushed")
  assert sorted(os.listdir(digits_run["serving"])) == below_threshold_run["serving_before"]


def test_a_model_over_its_latency_budget_is_not_pushed_and_the_run_says_why(
    digits_run, over_budget_run):
  assert over_budget_run["code"] == 1, over_budget_run["stderr"][-3000:]
  states = {n: r.state for n, r in over_budget_run["run"].nodes.items()}
  assert states.pop("ServingCheck") == "COMPLETE" and states.pop("Pusher") == "COMPLETE", states
  assert set(states.values()) == {"CACHED"}, states
  result = over_budget_run["outcome"]
  assert result.blessed and result.pushed_dir is None, result
  p99 = result.serving["latency_ms"]["batch_1"]["p99"]
  lines = over_budget_run["stdout"].strip().splitlines()
  assert lines[-2].startswith(f"serving check: FAILED, latency: p99 at batch 1: {p99:.2f} ms, "
                              "budget 0.001 ms (batch 1 p50 "), lines[-2:]
  assert lines[-1] == "no model pushed", lines[-1]
  # Every step COMPLETE or CACHED, and what the run did says why nothing was pushed.
  assert result.state == "not pushed: serving check failed", result.state
  assert sorted(os.listdir(digits_run["serving"])) == over_budget_run["serving_before"]
  # ML Metadata holds the figures; the first run's check passed.
  store = st.open_store(digits_run["metadata"])
  check = st.output(store, over_budget_run["run"], "ServingCheck", "infra_blessing")
  props = check.custom_properties
  assert props["blessed"].int_value == 0 and props["checked"].int_value == 1
  assert props["p99_ms_batch_1"].double_value == p99
  first = serving_result.load(store, _run(digits_run))
  assert first["passed"] and first["latency_ms"]["batch_64"]["requests"] == 50, first


def _requests(digits_run, path, shift_ink: float = 0.0, rename: bool = False) -> str:
  """The eval digits as a model server's request log: no label; `ink`
  shifted, `shape`'s categories renamed, if asked."""
  files = glob.glob(str(digits_run["root"] / "data" / "eval" / "*.tfrecord.gz"))
  with tf.io.TFRecordWriter(str(path)) as writer:
    for record in tf.data.TFRecordDataset(files, "GZIP"):
      example = tf.train.Example.FromString(record.numpy())
      features = example.features.feature
      del features["label"]
      features["ink"].float_list.value[0] += shift_ink
      if rename:
        features["shape"].bytes_list.value[0] = b"renamed-" + features["shape"].bytes_list.value[0]
      writer.write(example.SerializeToString())
  return str(path)


def test_debug_skew_lists_the_features_served_requests_moved(digits_run, tmp_path):
  where = ["--metadata", digits_run["metadata"], "--run", digits_run["run_id"]]
  same = _requests(digits_run, tmp_path / "same.tfrecord")
  code, out, err = debug_cli("skew", *where, "--examples", same)
  assert code == 0, out + err[-2000:]
  lines = out.strip().splitlines()
  assert lines[0] == f"skew: 323 served examples in {same} against train's statistics " \
                     f"(run {digits_run['run_id']})", lines[0]
  assert lines[-1] == "no feature skewed beyond its threshold", out
  # Two standard deviations of ink (0.05 in the training split), and renamed categories.
  moved = _requests(digits_run, tmp_path / "moved.tfrecord", shift_ink=0.1, rename=True)
  code, out, err = debug_cli("skew", *where, "--examples", moved)
  assert code == 1, out + err[-2000:]
  lines = out.strip().splitlines()
  assert lines[-1] == "skewed: ink, shape", out
  assert any(x.startswith("  feature 'ink': Jensen-Shannon divergence ") and
             x.endswith(" above its threshold 0.1") for x in lines), out
  assert any(x.startswith("  feature 'brightness': ") and "within" in x for x in lines), out
  (tmp_path / "log.txt").write_text("not TFRecords")
  code, out, err = debug_cli("skew", *where, "--examples", str(tmp_path / "log.txt"))
  assert code == 2 and err.startswith(f"error: {tmp_path / 'log.txt'}: expected TFRecords of "
                                      "tf.train.Example, found a broken record"), err


def test_convert_then_run_needs_no_hand_editing(tmp_path):
  """Raw-pixel digits from NumPy, converted to plain (uncompressed) TFRecords,
  then the pipeline on them as is."""
  from commands.tfrecords.main import main as tfrecords
  from dataset.convert.digits import load_images
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


def test_a_partial_run_retrains_alone_after_a_hyperparameter_change(partial_run):
  assert partial_run["code"] == 0, partial_run["stderr"][-3000:]
  before, after, latest = partial_run["before"], partial_run["after"], partial_run["latest"]
  new_trainer = after["Trainer"] - before["Trainer"]
  assert len(new_trainer) == 1, (before["Trainer"], after["Trainer"])
  upstream = TRAINING_NODES[:-1]
  assert {n: after[n] for n in upstream} == {n: before[n] for n in upstream}, \
      "a component upstream of the Trainer executed again"
  assert latest.nodes["Trainer"].execution.id in new_trainer
  assert {n: latest.nodes[n].state for n in upstream} == {n: "CACHED" for n in upstream}
  assert "Evaluator" not in latest.nodes and "Pusher" not in latest.nodes
  assert latest.parent is not None, "a partial run records the run it reused"
  # -v: the libraries' logs are back (TFX's own progress, at INFO).
  assert "Component Trainer is running." in partial_run["stderr"], \
      partial_run["stderr"][-2000:]


def test_a_partial_run_naming_an_unknown_node_lists_the_nodes(digits_run):
  code, _, err = run_local(*digits_run["args"], "--to-node", "Pushr")
  assert code == 2
  (line,) = [x for x in err.splitlines() if x.startswith("error: --to-node: expected one of ")]
  listed = line.split("expected one of ", 1)[1].split(", found")[0].split(", ")
  assert sorted(listed) == sorted(ALL_NODES), line
  assert line.endswith("found 'Pushr'"), line


def test_a_partial_run_judges_against_the_model_served_now(stale_baseline_partial_run,
                                                           digits_run):
  run = stale_baseline_partial_run
  assert run["code"] == 1, run["stdout"][-2000:] + run["stderr"][-3000:]
  served = os.path.join(digits_run["serving"], run["serving_before"][-1])
  assert sorted(os.listdir(digits_run["serving"])) == run["serving_before"], \
      "a partial run pushed a model the served one beats"
  lines = run["stdout"].splitlines()
  assert ("note: partial run: BaselineModel (served_version, training_key) runs again, "
          "its live state moved since it last ran") in lines, run["stdout"]
  assert any(line.startswith(f"warm start: from {served}; ") for line in lines), run["stdout"]
  result = run["outcome"]
  # Above the threshold, so only the served model could refuse it.
  assert result.blessed is False and result.value >= 0.01, (result.blessed, result.value)
  assert any("change against the baseline" in r for r in result.reasons), result.reasons
  assert lines[-1] == "no model pushed", lines[-3:]


def test_a_second_run_in_the_same_folder_refuses_and_names_the_first(
    stale_baseline_partial_run, digits_run):
  code, out, err = stale_baseline_partial_run["second"]
  assert code == 1, (out[-2000:], err[-2000:])
  home = os.path.dirname(digits_run["metadata"])
  (line,) = err.strip().splitlines()
  assert line.startswith(f"error: another run of pipeline 'digits' is in progress in {home} "
                         f"(pid {stale_baseline_partial_run['pid']}, started "), line
  assert "local_runner.py --output-dir" in line and "--from-node Trainer" in line, line
  assert line.endswith("this run did nothing. Wait for it to end, or use another "
                       "--output-dir"), line
  assert out == "", out


def test_a_push_is_refused_when_another_run_pushed_after_the_judgement(digits_run, tmp_path):
  """The Pusher's executor on the digits' model: judged against no served
  model, it meets a version another run pushed meanwhile, and refuses;
  judged against that version, it pushes."""
  import shutil

  from tfx.types import standard_artifacts, standard_component_specs

  import serving
  from components.evaluator.evaluator import JUDGEMENT
  from components.pusher.pusher import REFUSED, SERVING_DIR, Executor
  candidate = digits_run["outcome"].pushed_dir
  model = standard_artifacts.Model()
  model.uri = str(tmp_path / "model")
  shutil.copytree(candidate, os.path.join(model.uri, "Format-Serving"))
  # Another run's model, served meanwhile: another fingerprint, another key.
  other = tmp_path / "serving" / "100"
  shutil.copytree(candidate, other)
  (other / serving.FINGERPRINT).write_bytes(b"another model")
  serving.record(str(other), ["train"], "another run's key")
  blessing, infra = standard_artifacts.ModelBlessing(), standard_artifacts.InfraBlessing()
  blessing.uri, infra.uri = str(tmp_path / "blessing"), str(tmp_path / "infra")
  blessing.set_int_custom_property("blessed", 1)
  infra.set_int_custom_property("blessed", 1)
  os.makedirs(blessing.uri)
  inputs = {standard_component_specs.MODEL_KEY: [model],
            standard_component_specs.MODEL_BLESSING_KEY: [blessing],
            standard_component_specs.INFRA_BLESSING_KEY: [infra]}
  properties = {SERVING_DIR: str(tmp_path / "serving")}

  def push(judged):
    with open(os.path.join(blessing.uri, JUDGEMENT), "w") as f:
      f.write(json.dumps({"judged_against": judged, "metric": "accuracy", "value": 0.9,
                          "baseline_value": 0.8}))
    pushed = standard_artifacts.PushedModel()
    pushed.uri = str(tmp_path / f"pushed_{judged}")
    Executor().Do(inputs, {standard_component_specs.PUSHED_MODEL_KEY: [pushed]}, properties)
    return pushed

  refused = push(serving.NONE)
  assert refused.get_int_custom_property("pushed") == 0
  assert refused.get_string_custom_property(REFUSED) == (
      f"the served model changed after the Evaluator judged this candidate: judged against "
      f"no served model, version 100 served now in {tmp_path / 'serving'} (another run "
      f"pushed in between); run again to judge it against the model served now")
  assert sorted(os.listdir(tmp_path / "serving")) == ["100"]
  landed = push("100")
  assert landed.get_int_custom_property("pushed") == 1
  assert sorted(os.listdir(tmp_path / "serving"))[0] == "100" and len(
      os.listdir(tmp_path / "serving")) == 2

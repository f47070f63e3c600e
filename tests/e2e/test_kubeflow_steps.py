"""The compiled Kubeflow pipeline runs, fed as the open-source backend feeds it,
with everything on s3://.

Stand-ins, since no cluster and no cloud bucket can be had here:
- tests/fakes/kfp_backend.py, the backend's driver and launcher, written from its
  source: untyped inputs read back from a real ML Metadata store, its cache
  keys, pods with an empty working directory and only the spec's
  environment and secrets;
- tests/fakes/s3_server.py, moto's S3 server on 127.0.0.1, for the pipeline root,
  the data and the serving dir;
- tests/fakes/kfp_server.py, the Kubeflow API, which `python -m commands.kubeflow submit`
  talks to and which hands the submitted parameters to the backend.

The digits are one span. `submit` starts a run; its first step, SpanWindow,
lists the spans on s3:// and passes the window on as output parameters; the
backend runs the other steps, and the pushed model serves the eval digits.
A second run with nothing new runs SpanWindow again, which passes the same
values, and the backend's cache serves every step after it. Then a second
span lands: the third run reads spans 1-2, and Transform analyses only the
new one, span 1 coming from its analyzer cache on s3://. Then a third span
lands, drifted and relabelled: the gates stop the run, after ServedScore
scored the served model on it, and the notice says it fell.

The declaration has `tuning:` with `every: 1`, compiled with two trial
workers: the first run searches (the Tuner step, as the backend runs it,
its workers processes in its pod), the second reuses that search from the
cache, and the third, one span later, searches again.

It is compiled with `--kserve digits --kserve-canary-percent 10`: each run
ends pointing the stand-in cluster's InferenceService (KServe v0.20.0,
tests/fakes/kserve.py) at the newest version, run 3's as a canary; then a
user promotes it and rolls the serving dir back, the InferenceService with it.

It is compiled with `--keep-runs 1`: each run ends deleting what only older
runs used, version 1's lineage kept, and raising the cache epoch of run 1's
window once a cached step's output of it is gone.

The spec is compiled with `--notify`: its exit step posts each run's outcome
to a webhook on 127.0.0.1 (the third run's webhook cannot be reached, and
the run succeeds anyway), and `python -m commands.kubeflow runs` lists the four runs.

The backend is 2.17, its launcher publishing each step's log as an output
(a retried step's with the attempt's index); for the third run the install
has turned publishing off, and the run still trains and pushes.

This test process never loads TensorFlow's s3 file system: `submit` and the
steps do, each in a process of its own, and the outputs are read here
through the S3 protocol (boto3).
"""

import contextlib
import http.server
import json
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv
import yaml

from commands.kubeflow.cli import main as kubeflow
from components import ui_artifacts
from kubeflow.compile.spec import tasks as spec_tasks
from store.retention import cache_epoch
from tests.conftest import REPO
from tests.e2e.conftest import digits_in_bucket, kfp_launcher, write_drifted_span
from tests.fakes import kfp_server, kserve_storage
from tests.fakes import kserve as kserve_fake
from tests.fakes.kfp_backend import Backend, StepFailed
from tests.fakes.s3_server import (
  KEY,
  SECRET,
  download,
  env,
  free_port,
  read,
  s3_server,
  upload_folder,
)
from tests.fakes.standin_cluster import NAMESPACE as STANDIN_NAMESPACE
from tests.fakes.standin_cluster import StandInCluster

pytestmark = [pytest.mark.e2e, pytest.mark.long]

SECRETS = {"s3-creds": {"accesskey": KEY, "secretkey": SECRET}}
NOBODY = 65534  # the uid OpenShift-like clusters may assign: not in the image's passwd


def _has_object(client, uri: str, ending: str = "") -> bool:
  bucket, _, prefix = uri[len("s3://"):].partition("/")
  listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix)
  return any(o["Key"].endswith(ending) for o in listed.get("Contents", []))


def preemptions(client) -> dict:
  """Where the first run's first attempts are killed (tests/fakes/kfp_backend.py)."""
  def output(key):
    return lambda executor_input: _has_object(
        client, executor_input["outputs"]["artifacts"][key]["artifacts"][0]["uri"])
  return {
      "Transform": output("transform_graph"),
      # The checkpoint's index, once renamed into place (not its .tmp).
      "Trainer": lambda _: _has_object(client, "s3://pipelines/root/checkpoints/digits/",
                                       "/chief/checkpoint"),
      "Pusher": lambda _: _has_object(client, "s3://serving/digits/.tmp-"),
  }


def submit(spec: str, url: str, endpoint: str, state, *extra) -> dict:
  """`python -m commands.kubeflow submit` in its own process, as a user runs it;
  returns the run's id and the parameters the API server received."""
  before = set(state.runs)
  proc = subprocess.run(
      [sys.executable, "-m", "commands.kubeflow", "submit", "--spec", spec, "--host", url,
       "--train-steps", "400", *extra], cwd=REPO, capture_output=True, text=True,
      env={**os.environ, **env(endpoint)}, timeout=600)
  assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
  (new,) = set(state.runs) - before
  return {"out": proc.stdout, "id": new,
          "params": state.runs[new]["runtime_config"]["parameters"],
          "root": state.runs[new]["runtime_config"].get("pipeline_root")}


def execute(backend, spec, submitted, state, log_dir):
  """The backend runs a submitted run; the API then reports its state."""
  try:
    result = backend.run(spec, submitted["params"], log_dir=log_dir,
                         run_id=submitted["id"], pipeline_root=submitted["root"])
  except StepFailed as e:
    state.runs[submitted["id"]]["state"] = "FAILED"
    return e.run
  state.runs[submitted["id"]]["state"] = "SUCCEEDED"
  return result


def steps(run) -> dict:
  """The pipeline's own steps' states: not the exit handler's DAG, nor it."""
  return {k: v for k, v in run.states.items() if k not in ("exit-handler-1", "notify")}


@contextlib.contextmanager
def webhook():
  """A webhook on 127.0.0.1 that keeps every JSON message posted to it."""
  received = []

  class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
      received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
      self.send_response(200)
      self.end_headers()
      self.wfile.write(b"ok")

    def log_message(self, *args):
      pass
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  try:
    yield f"http://127.0.0.1:{server.server_port}/hooks/T0", received
  finally:
    server.shutdown()
    server.server_close()


def _objects(client, bucket: str, prefix: str) -> dict:
  """key -> (ETag, LastModified) of the objects under a prefix."""
  found = {}
  for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for obj in page.get("Contents", []):
      found[obj["Key"][len(prefix):]] = (obj["ETag"], obj["LastModified"])
  return found


@pytest.fixture(scope="module")
def ran(request, tmp_path_factory):
  root = tmp_path_factory.mktemp("kfp_s3")
  url, state, stop = kfp_server.serve()
  with s3_server(buckets=("pipelines", "data", "serving")) as (endpoint, client), \
       webhook() as (hook, messages), StandInCluster(str(root)) as cluster:
    # The predictor's account, as docs/kubeflow.md has users write it
    # (compiled with --kserve-service-account s3-reader).
    kserve_storage.add_s3_account(cluster.store, STANDIN_NAMESPACE, endpoint)
    raw = digits_in_bucket(root, client, window=2)
    # The third run must push: a warm-started candidate may land a few eval
    # digits below the served model (CI: "not blessed"), which the default
    # max_change of 0.01 refuses. test_e2e covers the refusal.
    raw["evaluation"] = {"max_change": 0.05}
    raw["drift"] = {"action": "stop"}  # the drifted span 3's run stops at the gate
    # A small search, again with each new span (every: 1).
    raw["tuning"] = {"algorithm": "random", "max_trials": 2, "steps": 30, "every": 1,
                     "space": {"learning_rate": {"log_uniform": [2e-3, 1e-2]},
                               "width": {"int": [64, 128]}}}
    (root / "digits.yaml").write_text(yaml.safe_dump(raw))
    assert kubeflow([
        "compile", "--dataset", str(root / "digits.yaml"),
        "--image", "local/tfrecord-pipeline:test", "--pipeline-root", "s3://pipelines/root",
        "--data-root", "s3://data/digits", "--serving-dir", "s3://serving/digits",
        "--skip-data-check", "--output-dir", str(root / "compiled"), "--notify", hook,
        "--tune-workers", "2", "--keep-runs", "1", "--train", "progress_seconds=2",
        *[a for k, v in env(endpoint).items() if not k.startswith("AWS_")
          for a in ("--env", f"{k}={v}")], "--env", "AWS_REGION=us-east-1",
        "--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID",
        "--secret-env", "s3-creds:secretkey=AWS_SECRET_ACCESS_KEY",
        "--node-selector", "Trainer:cloud.google.com/gke-accelerator=nvidia-l4",
        "--toleration", "Trainer:nvidia.com/gpu=present:NoSchedule",
        "--kserve", "digits", "--kserve-canary-percent", "10",
        "--kserve-service-account", "s3-reader"]) == 0
    spec = str(root / "compiled" / "pipeline.yaml")
    # The launcher reaches the store only through the ConfigMap compile
    # wrote, applied as docs/kubeflow.md says.
    kfp_launcher(root / "compiled", cluster)
    # Hardened pods, and the first run's first attempts killed: Transform
    # once its graph's first object is written, the Trainer at its first
    # checkpoint, the Pusher half-way through its push.
    # Argo's retry policy as docs/kubeflow.md advises for preemptions
    # (Always): the drifted span's failed gates are retried to their end,
    # so retention need not wait for a retry that may come.
    backend = Backend(str(root / "backend"), client, secrets=SECRETS, user=NOBODY,
                      kills=preemptions(client), retry_policy="Always", cluster=cluster)
    request.addfinalizer(backend.close)
    (root / "logs").mkdir()
    first = submit(spec, url, endpoint, state)
    run1 = execute(backend, spec, first, state, str(root / "logs"))
    deployed = [traffic(cluster)]
    attempts = {task: json.loads(client.get_object(Bucket="pipelines", Key=(
        f"root/digits/{first['id']}/status/{task}.json"))["Body"].read())
                for task in ("Trainer", "Evaluator")}
    folders = [_objects(client, "pipelines", f"root/digits/{first['id']}/")]
    second = submit(spec, url, endpoint, state)
    run2 = execute(backend, spec, second, state, str(root / "logs2"))
    deployed.append(traffic(cluster))
    folders.append(_objects(client, "pipelines", f"root/digits/{first['id']}/"))
    cache = _objects(client, "pipelines", "root/analyzer_cache/digits/")
    serving = download(client, "s3://serving/digits", root / "serving")
    upload_folder(client, str(root / "local" / "span-1"), "s3://data/digits/span-2")
    # This run's webhook cannot be reached; the run must not fail for it.
    # And the install's PUBLISH_LOGS is "false" for it (an admin's change
    # between runs): no step gets the launcher's `executor-logs` output.
    third = submit(spec, url, endpoint, state, "--param",
                   f"notify_url=http://127.0.0.1:{free_port()}/hooks/T0")
    backend.publish_logs = False
    run3 = execute(backend, spec, third, state, str(root / "logs3"))
    deployed.append(traffic(cluster))
    backend.publish_logs = True  # the first steps below: keyed as runs 1 and 2 were
    published3 = [k for k in _objects(client, "pipelines", f"root/digits/{third['id']}/")
                  if "/executor-logs" in k]
    folders.append(_objects(client, "pipelines", f"root/digits/{first['id']}/"))
    # None if run 3's retention raised no epoch: the test then says why,
    # from run 3's summary and states, rather than the fixture failing.
    epochs = (json.loads(read(client, "s3://pipelines/root/digits/_retention/epochs.json"))
              if _objects(client, "pipelines", "root/digits/_retention/epochs.json")
              else None)
    cache3 = _objects(client, "pipelines", "root/analyzer_cache/digits/")
    serving3 = download(client, "s3://serving/digits", root / "serving3")
    outputs = {key: download(client, art["uri"], root / "out" / "-".join(key))
               for key, art in run1.outputs.items()
               if key in {("StatisticsGen", "statistics"), ("Evaluator", "blessing")}}
    page = _run_page(backend, client, run1)
    # Run 3's retention deleted run 1's image check page (nothing kept names
    # it); run 3's own is on its page.
    page3 = _run_page(backend, client, run3)
    summaries = [_run_page(backend, client, run)[("Retention", "summary")][2]
                 for run in (run1, run2, run3)]
    (root / "retention.md").write_text("\n".join(summaries))  # to read after a failure
    # Span 3 lands drifted and relabelled: the gates stop the run, and
    # ServedScore, before them, scores the served version 2 on it.
    write_drifted_span(str(root / "local"), 3, 0, 450)
    upload_folder(client, str(root / "local" / "span-3"), "s3://data/digits/span-3")
    drifted = submit(spec, url, endpoint, state)
    stopped = execute(backend, spec, drifted, state, str(root / "logs_drifted"))
    stopped_page = _run_page(backend, client, stopped)
    listed = subprocess.run(
        [sys.executable, "-m", "commands.kubeflow", "runs", "--spec", spec, "--host", url],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, **env(endpoint)},
        timeout=600)
    # Spans 2 and 3 withdrawn: the window is span 1's again, over which run
    # 3's retention deleted a cached step's output. The pipeline's first steps.
    for span in ("span-2", "span-3"):
      for key in _objects(client, "data", f"digits/{span}/"):
        client.delete_object(Bucket="data", Key=f"digits/{span}/{key}")
    again = backend.run(first_steps(spec, root / "first_steps.yaml"), first["params"],
                        log_dir=str(root / "logs4"), run_id="again",
                        pipeline_root=first["root"])
    # The canary run 3 deployed, promoted; then the serving dir rolled back,
    # the InferenceService with it: a user's commands, as they run them.
    kserve_lines = []
    for command in (["kserve", "promote", "--name", "digits"],
                    ["rollback", "--kserve", "digits"]):
      proc = subprocess.run(
          [sys.executable, "-m", "commands.serving", *command, "--serving-dir",
           "s3://serving/digits"], cwd=REPO, capture_output=True, text=True, timeout=600,
          env={**os.environ, **env(endpoint), "KUBECONFIG": cluster.kubeconfig})
      kserve_lines.append(proc.stdout + proc.stderr)
      deployed.append(traffic(cluster))
    isvc = kserve_fake.reconciled(cluster.store, "kubeflow", "digits")
    yield {"folders": folders, "epochs": epochs, "summaries": summaries, "again": again,
           "attempts": attempts,
           "root": root, "page": page, "page3": page3, "first": first, "second": second,
           "run1": run1, "run2": run2, "run3": run3, "stopped": stopped, "cache": cache,
           "cache3": cache3, "outputs": outputs, "serving": serving, "serving3": serving3,
           "messages": list(messages), "runs": listed, "published3": published3,
           "ids": [r["id"] for r in (first, second, third, drifted)],
           "stopped_page": stopped_page, "scores": _objects(client, "serving", "digits/monitoring/"),
           "deployed": deployed, "kserve_lines": kserve_lines, "isvc": isvc,
           "versions_after": download(client, "s3://serving/digits", root / "serving4")}
  stop()


def traffic(cluster) -> list:
  """(percent, serving-dir version) of the InferenceService's routes."""
  try:
    return kserve_fake.traffic(cluster.store, "kubeflow", "digits")
  except (KeyError, TypeError, AttributeError):
    return []  # none yet: the test says what it expected


def _run_page(backend, client, run) -> dict:
  """(task, key) -> (ML Metadata type, custom properties, the object at the
  URI if it is one) of each output of a type the run page draws, as recorded."""
  page = {}
  for key, art in run.outputs.items():
    [stored] = backend.store.get_artifacts_by_id([int(art["name"])])
    [kind] = backend.store.get_artifact_types_by_id([stored.type_id])
    if kind.name in ui_artifacts.CLASS_PATHS:
      bucket, _, name = art["uri"][len("s3://"):].partition("/")
      try:
        text = client.get_object(Bucket=bucket, Key=name)["Body"].read().decode()
      except client.exceptions.NoSuchKey:
        text = None
      page[key] = (kind.name, art["metadata"], text)
  return page


def test_the_run_page_gets_the_metrics_the_confusion_matrix_and_the_model_card(ran):
  # What the KFP frontend draws (MetricsVisualizations.tsx): artifacts of
  # these types with a display_name, in these shapes.
  page = ran["page"]
  # (Run 1's image check page went with run 3's retention: `ran["page3"]`.)
  assert {k: v[0] for k, v in page.items()} == {
      ("ImageCheck", "page"): "system.HTML",
      ("Evaluator", "metrics"): "system.Metrics",
      ("Evaluator", "classification_metrics"): "system.ClassificationMetrics",
      ("Pusher", "model_card"): "system.Markdown",
      ("RunReport", "report"): "system.HTML",
      ("Retention", "summary"): "system.Markdown",
      ("KServeDeploy", "deployed"): "system.Markdown",
      ("ServedScore", "page"): "system.HTML"}, page
  # Run 1's, deleted by run 2's retention (a never-cached step's, as
  # SpanWindow's); run 3's says what it did.
  assert ran["page3"][("KServeDeploy", "deployed")][2].startswith(
      "kserve: version "), ran["page3"][("KServeDeploy", "deployed")]
  _, metrics, _ = page[("Evaluator", "metrics")]
  assert metrics["display_name"] == "metrics" and metrics["model blessed"] == 1.0, metrics
  assert metrics["sparse_categorical_accuracy"] >= 0.9, metrics
  _, chart, _ = page[("Evaluator", "classification_metrics")]
  matrix = chart["confusionMatrix"]["struct"]  # wrapped by the backend, read so
  assert [a["displayName"] for a in matrix["annotationSpecs"]] == [str(d) for d in range(10)]
  rows = [r["row"] for r in matrix["rows"]]
  assert len(rows) == 10 and all(len(r) == 10 for r in rows), rows
  eval_examples = metrics["example_count"]
  assert sum(map(sum, rows)) == eval_examples, (rows, eval_examples)
  assert sum(rows[i][i] for i in range(10)) / eval_examples == pytest.approx(
      metrics["sparse_categorical_accuracy"]), rows
  _, card, text = page[("Pusher", "model_card")]
  assert card["display_name"] == "model_card"
  assert text and text.startswith("# Model card: ") and "## Evaluation" in text, text
  # The report a local run writes, from the steps' outputs and records.
  _, report, html = page[("RunReport", "report")]
  assert report["display_name"] == "report" and html.startswith("<!DOCTYPE html>"), html[:200]
  for anchor in ("dag", "statistics", "image_check", "drift", "anomalies", "tuning",
                 "training", "evaluation", "serving", "pushed"):
    assert f'<section id="{anchor}"' in html, anchor
  # The image check ran as a step on the cluster, and its findings reached
  # the report, and the step's own page.
  assert "1797 images checked (eval_span1: 323, train_span1: 1474)" in html, html
  kind, shown, checked = ran["page3"][("ImageCheck", "page")]
  assert kind == "system.HTML" and shown["display_name"] == "page", (kind, shown)
  assert checked.startswith("<!DOCTYPE html>") and " images checked (" in checked, checked[:500]
  assert "Blessed." in html and "Per class (label)" in html and "Passed: the model loads" \
      in html and "pushed now" in html, html
  assert "did not run in this run" not in html, html


def test_the_first_step_resolves_the_window_on_s3(ran):
  # submit lists nothing: it passes the flags' parameters only (and who
  # submitted, for the model card).
  assert set(ran["first"]["params"]) == {"train_steps", "scheduled_by"}, ran["first"]["params"]
  values = ran["run1"].parameters["SpanWindow"]
  assert json.loads(values["example_splits"]) == ["eval_span1"]
  assert json.loads(values["train_args"]) == {"numSteps": 400, "splits": ["train_span1"]}
  assert values["served_version"] == "none" and len(values["training_key"]) == 16
  log = (ran["root"] / "logs" / "SpanWindow.log").read_text()
  assert "window: span 1 under s3://data/digits" in log, log[-2000:]


def test_every_step_ran_with_untyped_inputs_and_the_statistics_load(ran):
  assert set(steps(ran["run1"]).values()) == {"EXECUTED"}, ran["run1"].states
  # As a non-root user without capabilities, in hardened pods (NOBODY).
  stats = ran["outputs"][("StatisticsGen", "statistics")]
  for split in ("train_span1", "eval_span1"):
    loaded = tfdv.load_stats_binary(os.path.join(stats, f"Split-{split}", "FeatureStats.pb"))
    names = {f.path.step[0] for f in loaded.datasets[0].features}
    assert {"image", "ink", "label", "row_ink"} <= names


def test_the_pushed_model_serves_the_eval_digits_from_s3(ran):
  assert os.path.isfile(os.path.join(ran["outputs"][("Evaluator", "blessing")], "BLESSED"))
  versions = [v for v in os.listdir(ran["serving"]) if v.isdigit()]
  assert len(versions) == 1, os.listdir(ran["serving"])
  serve = tf.saved_model.load(os.path.join(ran["serving"], versions[0])) \
      .signatures["serving_examples"]
  files = sorted((ran["root"] / "local" / "span-1" / "eval").glob("*.tfrecord.gz"))
  records = [r.numpy() for r in tf.data.TFRecordDataset([str(f) for f in files], "GZIP")]
  labels = np.array([tf.train.Example.FromString(r).features.feature["label"]
                     .int64_list.value[0] for r in records])
  probs = serve(examples=tf.constant(records))["probabilities"].numpy()
  accuracy = float((probs.argmax(axis=1) == labels).mean())
  assert accuracy >= 0.95, f"expected >= 0.95 eval accuracy, found {accuracy:.4f}"


def test_the_runtime_train_steps_reached_the_trainer(ran):
  log = (ran["root"] / "logs" / "Trainer.log").read_text()
  assert "epoch 8 (step 400): " in log, log[-3000:]


def test_a_second_run_with_nothing_new_runs_only_the_window_step(ran):
  assert ran["run2"].parameters["SpanWindow"] == ran["run1"].parameters["SpanWindow"]
  states = steps(ran["run2"])
  assert states.pop("SpanWindow") == "EXECUTED"
  # And the report and retention, never cached: this run's page shows this run;
  # and KServeDeploy, which names the serving dir's newest version.
  assert states.pop("RunReport") == "EXECUTED" and states.pop("Retention") == "EXECUTED"
  assert states.pop("KServeDeploy") == "EXECUTED"
  assert set(states.values()) == {"CACHED"}, ran["run2"].states


def test_node_selector_and_toleration_reach_only_the_trainers_pod(ran):
  pods = ran["run1"].pods
  assert pods["Trainer"]["node_selector"] == {
      "cloud.google.com/gke-accelerator": "nvidia-l4"}
  assert pods["Trainer"]["tolerations"] == [{
      "key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
      "effect": "NoSchedule"}]
  for name, pod in pods.items():  # the exit step's pod included
    assert pod["secret_env"]["AWS_SECRET_ACCESS_KEY"] == ("s3-creds", "secretkey"), name
    if name != "Trainer":
      assert not pod["node_selector"] and not pod["tolerations"], name


def test_a_new_span_reruns_what_reads_it_and_transform_analyses_only_it(ran):
  values = ran["run3"].parameters["SpanWindow"]
  assert json.loads(values["example_splits"]) == ["eval_span1", "eval_span2"]
  states = steps(ran["run3"])
  # Everything runs again: the curated schema too, which reads no artifact
  # and so takes the new window's cache epoch (store/retention/cache_epoch.py).
  assert set(states.values()) == {"EXECUTED"}, states
  spans_before = {key.split("/")[0] for key in ran["cache"]}
  assert spans_before == {"train_span1"}, ran["cache"]
  span1 = {k: v for k, v in ran["cache3"].items() if k.startswith("train_span1/")}
  assert span1 == {k: v for k, v in ran["cache"].items()}, \
      "span 1's analyzer cache entry was rewritten"
  assert any(k.startswith("train_span2/") for k in ran["cache3"]), ran["cache3"]
  # The first run's push is now the baseline (and the warm start).
  (pushed,) = [v for v in os.listdir(ran["serving"]) if v.isdigit()]
  assert values["served_version"] == pushed, (values["served_version"], pushed)


def _fields(message) -> dict:
  (attachment,) = message["attachments"]
  return {f["title"]: f["value"] for f in attachment["fields"]}


def test_the_exit_step_posts_each_runs_outcome_to_the_webhook(ran):
  pushed, cached, stopped = ran["messages"]
  (version,) = [v for v in os.listdir(ran["serving"]) if v.isdigit()]
  first = _fields(pushed)
  assert first["pipeline"] == "digits" and first["run"] == ran["ids"][0], first
  assert first["state"] == "SUCCEEDED" and first["pushed version"] == version, first
  assert re.fullmatch(r"yes \(accuracy (0\.\d{4}|1\.0000)\)", first["blessed"]), first
  assert f"pushed version {version}" in pushed["text"], pushed["text"]
  second = _fields(cached)
  assert second["state"] == "SUCCEEDED" and second["pushed version"] == "none", second
  assert "nothing new to train on" in cached["text"], cached["text"]
  third = _fields(stopped)
  assert third["state"] == "FAILED" and third["failed step"] in ("DriftGate", "AnomaliesGate"), \
      third
  assert stopped["attachments"][0]["color"] == "danger"


def test_the_served_model_falls_on_the_drifted_span_and_the_notice_says_so(ran):
  """ServedScore ran before the gates that stopped the run: its record is
  beside the serving dir's versions, its chart on the run page, and its
  line in the notice."""
  served = sorted(v for v in os.listdir(ran["serving3"]) if v.isdigit())[-1]  # run 3's
  assert f"{served}/span-3.json" in ran["scores"], ran["scores"]
  fields = _fields(ran["messages"][2])
  assert re.fullmatch(rf"served model \(version {served}\) on span 3: accuracy 0\.[0-4]\d{{3}} "
                      r"\[0\.\d{4}, 0\.\d{4}\], past its threshold 0\.9",
                      fields.get("served model", "")), fields
  assert fields["served model"] in ran["messages"][2]["text"]
  kind, _, shown = ran["stopped_page"][("ServedScore", "page")]
  assert kind == "system.HTML" and "<svg" in shown and fields["served model"] in shown, shown


def test_a_failed_step_skips_the_rest_but_not_the_exit_step(ran):
  states = ran["stopped"].states
  assert states["DriftGate"] == "FAILED" and states["ServedScore"] == "EXECUTED", states
  assert states["notify"] == "EXECUTED", states
  after = ("Transform", "Trainer", "Evaluator", "Pusher", "KServeDeploy")
  assert {states[name] for name in after} == {"SKIPPED"}, states


def test_an_unreachable_webhook_is_logged_and_the_run_succeeds(ran):
  assert set(steps(ran["run3"]).values()) <= {"EXECUTED", "CACHED"}, ran["run3"].states
  log = (ran["root"] / "logs3" / "notify.log").read_text()
  assert "notify: could not post to http://127.0.0.1:" in log, log[-2000:]
  assert len(ran["messages"]) == 3, "the unreachable webhook's message went somewhere"


def test_runs_lists_each_runs_state_and_what_it_pushed(ran):
  assert ran["runs"].returncode == 0, ran["runs"].stderr[-3000:]
  lines = {line.split("\t")[3]: line for line in ran["runs"].stdout.strip().splitlines()}
  first, second, third, stopped = (lines[i] for i in ran["ids"])
  (version,) = [v for v in os.listdir(ran["serving"]) if v.isdigit()]
  assert "\tSUCCEEDED\t" in first and first.endswith(f"pushed version {version}"), first
  assert second.endswith("nothing new to train on (served from the cache)"), second
  assert "\tFAILED\t" in stopped and "failed at " in stopped, stopped
  assert "\tSUCCEEDED\t" in third and "pushed version" in third, third


def _searches(serving: str) -> dict:
  folder = os.path.join(serving, "tuning")
  return {name: json.loads(open(os.path.join(folder, name, "search.json")).read())
          for name in sorted(os.listdir(folder))}


def test_the_tuner_searches_once_and_its_best_settings_reach_the_trainer(ran):
  search = ran["run1"].parameters["SpanWindow"]["tuning_search"]
  (recorded,) = _searches(ran["serving"]).values()
  assert recorded["id"] == search and recorded["span"] == 1, (search, recorded)
  assert len(recorded["trials"]) == 2 and recorded["trials"][0]["score"] > 0.5, recorded
  # Two worker processes in the Tuner's pod, beside the oracle on 127.0.0.1.
  assert recorded["workers"] == 2, recorded
  tuner_log = (ran["root"] / "logs" / "Tuner.log").read_text()
  assert "Tuner: no earlier search for this pipeline" in tuner_log, tuner_log[-3000:]
  best = recorded["best_values"]
  trainer_log = (ran["root"] / "logs" / "Trainer.log").read_text()
  assert f"learning_rate={best['learning_rate']:.4g}" in trainer_log \
      and f"width={best['width']}" in trainer_log, (best, trainer_log[-3000:])
  # The second run, nothing new: the same search, from the cache.
  assert ran["run2"].parameters["SpanWindow"]["tuning_search"] == search
  assert ran["run2"].states["Tuner"] == "CACHED", ran["run2"].states


def test_a_new_span_past_tuning_every_searches_again(ran):
  searches = _searches(ran["serving3"])
  assert sorted(s["span"] for s in searches.values()) == [1, 2], searches
  assert ran["run3"].parameters["SpanWindow"]["tuning_search"].startswith("span2-")
  log = (ran["root"] / "logs3" / "Tuner.log").read_text()
  assert "span 2 is 1 spans past search span1-" in log, log[-3000:]


def test_a_run_with_log_publishing_off_still_trains_and_pushes(ran):
  """Run 3, under PUBLISH_LOGS "false": the launcher adds no output, and
  every step still runs and the model is pushed, as a second version."""
  assert not [key for key in ran["run3"].outputs if key[1] == "executor-logs"], \
      sorted(ran["run3"].outputs)
  assert ran["published3"] == [], ran["published3"]
  assert set(steps(ran["run3"]).values()) == {"EXECUTED"}, ran["run3"].states
  before = {v for v in os.listdir(ran["serving"]) if v.isdigit()}
  after = {v for v in os.listdir(ran["serving3"]) if v.isdigit()}
  assert len(before) == 1 and len(after - before) == 1, (before, after)


def test_killed_first_attempts_were_retried_and_pushed_exactly_once(ran):
  attempts = ran["run1"].attempts
  assert {n: attempts[n] for n in ("Transform", "Trainer", "Pusher")} == {
      "Transform": 2, "Trainer": 2, "Pusher": 2}, attempts
  assert {n for n, a in attempts.items() if a > 1} == {"Transform", "Trainer", "Pusher"}
  # Each step's record counts its attempts (retention waits for a retry).
  records = ran["attempts"]
  assert (records["Trainer"]["attempt"], records["Trainer"]["retries"]) == (2, 2), records
  assert (records["Evaluator"]["attempt"], records["Evaluator"]["retries"]) == (1, 2)
  versions = [v for v in os.listdir(ran["serving"]) if v.isdigit()]
  assert len(versions) == 1, os.listdir(ran["serving"])
  log = (ran["root"] / "logs" / "Trainer.log").read_text()
  resumed = [line for line in log.splitlines() if "resumed from step " in line]
  assert resumed and " of 400 " in resumed[0], log[-3000:]
  # Its progress in the step's log (compiled with a line every 2 s): the
  # step, the loss, examples per second, the time left.
  progress = re.findall(r"Trainer: step (\d+) of 400, loss \d+\.\d+, \d+ examples/s, "
                        r"\S+ left", log)
  assert progress and any(int(step) < 400 for step in progress), log[-3000:]
  assert "checkpoints of the finished training deleted" in log, log[-3000:]
  # Backend 2.17 publishes each attempt's log apart; the killed pod's
  # launcher died with it, so the recorded log is the retry's, whole.
  logs = ran["folders"][0]
  trainer_logs = sorted(k.rsplit("/", 1)[-1] for k in logs
                        if k.startswith("Trainer/") and "/executor-logs" in k)
  assert trainer_logs == ["executor-logs-1"], trainer_logs
  assert ran["run1"].outputs[("Trainer", "executor-logs")]["uri"].endswith("/executor-logs-1")


def first_steps(spec: str, path) -> str:
  """The compiled spec cut to its first two steps, SpanWindow and
  ImportExampleGen, as they are (their cache keys unchanged)."""
  with open(spec, encoding="utf-8") as f:
    documents = [d for d in yaml.safe_load_all(f) if d]
  tasks = spec_tasks(documents[0])
  documents[0]["root"]["dag"]["tasks"] = {
      name: tasks[name] for name in ("SpanWindow", "ImportExampleGen")}
  path.write_text(yaml.safe_dump_all(documents))
  return str(path)


def _outputs_in(objects) -> set:
  """(task, output key) of the objects under a run's folder: <task>/<salt>/<key>/…"""
  return {tuple(k.split("/")[0:3:2]) for k in objects if k.count("/") >= 2}


def test_kserve_serves_version_1_then_2_as_a_canary_promoted_then_rolled_back(ran):
  """Compiled with --kserve digits --kserve-canary-percent 10: KServeDeploy after
  the Pusher, on the stand-in's KServe v0.20.0 (tests/fakes/kserve.py), in the
  step's namespace; then a user's promote and rollback."""
  v1, v2, copy = sorted(v for v in os.listdir(ran["versions_after"]) if v.isdigit())
  assert ran["deployed"] == [
      [(100, v1)],  # run 1 created it
      [(100, v1)],  # run 2 pushed nothing: nothing changed
      [(10, v2), (90, v1)],  # run 3's push, a canary at the declared percent
      [(100, v2)],  # promoted
      [(100, copy)]], (ran["deployed"], ran["kserve_lines"])  # rolled back
  assert ran["kserve_lines"][0].strip() == f"kserve: version {v2} promoted to all traffic"
  with open(os.path.join(ran["versions_after"], copy, "assets.extra", "rollback.json")) as f:
    assert json.load(f)["to"] == v1  # the serving dir's copy of version 1
  isvc = ran["isvc"]
  predictor = isvc["spec"]["predictor"]
  assert predictor["model"]["storageUri"] == f"s3://serving/digits/kserve/{copy}/"
  assert predictor["serviceAccountName"] == "s3-reader"
  # Through KServe's schema and webhooks: the defaulter's annotation is on it.
  assert isvc["metadata"]["annotations"]["modelFormat"] == "tensorflow", isvc["metadata"]
  assert [c["status"] for c in isvc["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
  log = (ran["root"] / "logs3" / "KServeDeploy.log").read_text()
  assert f"kserve: version {v2} is a canary at 10% of traffic; version {v1} keeps 90%" in log, \
      log[-2000:]


def test_each_run_ends_deleting_what_only_older_runs_used(ran):
  """Compiled with --keep-runs 1: the Retention step ends each run."""
  # The launcher's logs stay: runs the cache serves link the first run's.
  after1, after2, after3 = ({key.split("/")[0] for key in objects
                             if "/executor-logs" not in key} for objects in ran["folders"])
  assert all(any(k.startswith(f"{task}/") and "/executor-logs-" in k
                 for k in ran["folders"][2]) for task in steps(ran["run1"])), \
      "run 1's step logs should outlive retention"
  had, has = (_outputs_in(objects) for objects in (ran["folders"][0], ran["folders"][2]))
  summary1, summary2, summary3 = ran["summaries"]
  assert "keeping the newest 1 of 1 runs" in summary1, summary1
  # Run 2 took every output of run 1 from the cache but SpanWindow's values
  # and KServeDeploy's page: only those went, and they need no new cache
  # epoch (never cached).
  assert after1 - after2 == {"SpanWindow", "KServeDeploy"}, (after1, after2, summary2)
  assert "deleted " in summary2 and "new cache epoch" not in summary2, summary2
  # Run 3 read a new window. Of run 1, version 1 (still served) keeps its
  # lineage: the model, what it was trained and judged on, the push.
  # (The statistics too: the push read them for the model card.)
  for key in (("ImportExampleGen", "examples"), ("Transform", "transform_graph"),
              ("Trainer", "model"), ("Evaluator", "evaluation"),
              ("StatisticsGen", "statistics"), ("Pusher", "model_card"),
              ("RunReport", "report")):
    assert key in had and key in has, (key, summary3)
  # What went is what nothing kept names: the anomalies, the image check's
  # findings and page, and the window's values.
  gone = had - has
  assert {key for key in gone if key[0] not in ("SpanWindow", "KServeDeploy")} == {
      ("ExampleValidator", "anomalies"), ("ImageCheck", "result"), ("ImageCheck", "page"),
      ("ServedScore", "score"), ("ServedScore", "page")}, \
      (gone, summary3)
  # Deleting a cached step's output raised run 1's window's epoch, so a run
  # over that window again runs its steps rather than read deleted files.
  window = cache_epoch.window_digest(ran["run1"].parameters["SpanWindow"]["input_config"])
  assert ran["run1"].parameters["SpanWindow"]["cache_epoch"].startswith(f"{window}.0.0.")
  assert ran["epochs"] == {window: 1}, (ran["epochs"], summary3, steps(ran["run3"]))
  assert f"new cache epoch for {window}" in summary3, summary3


def test_a_run_over_a_window_retention_cleaned_imports_again_not_from_the_cache(ran):
  # Run 2, over the same window as run 1, took ImportExampleGen from the
  # cache; after retention deleted some of that window's cached outputs, a
  # run over it again (span 2 withdrawn) runs the step, under a new epoch.
  again, first = ran["again"], ran["run1"].parameters["SpanWindow"]
  assert ran["run2"].states["ImportExampleGen"] == "CACHED"
  assert again.parameters["SpanWindow"]["input_config"] == first["input_config"]
  window = cache_epoch.window_digest(first["input_config"])
  assert again.parameters["SpanWindow"]["cache_epoch"].startswith(f"{window}.0.1.")
  assert again.states["ImportExampleGen"] == "EXECUTED", again.states


def test_no_step_builds_an_sdist_of_tfx(ran):
  built = [p.name for p in (ran["root"] / "logs").glob("*.log")
           if "Creating temporary sdist package" in p.read_text()]
  assert not built, built

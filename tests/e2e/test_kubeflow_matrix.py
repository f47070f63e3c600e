"""Data kinds on the compiled pipeline, fed as the open-source backend feeds
it, with everything on s3://: cells chosen for the branches the code takes
on kind and store that the digits (tests/e2e/test_kubeflow_steps.py: a PNG
image, float numbers, a string category, an int sequence, class ids, spans,
Transform with analyzers and its cache) do not take.

- raw-regression-spans: an image stored as raw pixel bytes, alone, over two
  spans, and a float label (its brightness) to predict. Its preprocessing
  has no analyzer, so Transform's analyzer cache output holds no object,
  and on S3 a prefix without an object does not exist (this cell failed at
  Transform before components/transform.py `publish` stopped assuming the
  folder); the input pipeline decodes raw bytes; the Evaluator judges RMSE;
  the serving check sends raw pixels and reads `value`; DriftGate compares
  span 2 with span 1.
- names-plain: class names as the label (serving answers `all_classes`);
  no spans, so no SpanWindow: ImportExampleGen splits one folder by hash
  buckets, BaselineModel resolves the served model when it runs, and
  Transform keeps no cache; a JPEG image in three channels, stored larger
  than declared (resized); an optional float (the training mean filled in,
  and its indicator), an optional int with a declared default, an int of
  length 2, an optional int category (its `__missing__` id), a
  variable-length float sequence (z-scored).

Stand-ins as in tests/e2e/test_kubeflow_steps.py: tests/fakes/kfp_backend.py (every
step as uid 65534 without capabilities) and moto's S3 server. Each cell is
fed as another backend version feeds it (the digits run on 2.17 with the
log output): names-plain as 2.5 does, with the `executor-logs` output;
raw-regression-spans as 2.17 does with logs not published (PUBLISH_LOGS
"false"): named outputs, the executor output file under the task's folder. Tiny data, a
few training steps: what is judged is that every step runs and the model is
pushed and answers in the label's shape, not its accuracy.
"""

import json
import os
import re

import numpy as np
import pytest
import yaml

from convert.digits import load_images
from convert.rows import write_rows
from kubeflow.cli import main as kubeflow
from tests.e2e.test_kubeflow_steps import NOBODY, SECRETS, download, steps
from tests.fakes.kfp_backend import Backend
from tests.fakes.s3_server import env, read, s3_server, upload_folder
from tests.fakes.standin_cluster import StandInCluster

pytestmark = pytest.mark.e2e

NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def raw_regression_spans(root) -> dict:
  """Two spans of raw 8x8 digits, each split train/eval; the label is the
  image's mean brightness. Returns the declaration."""
  images, _ = load_images()
  rows = [{"image": [images[i].tobytes()],
           "brightness": [float(images[i].mean() / 255.0)]} for i in range(600)]
  for span, part in ((1, rows[:300]), (2, rows[300:])):
    write_rows(part, str(root / "local" / f"span-{span}"), "digits", eval_percent=25)
  return {
      "name": "raw",
      "data": {"compression": "GZIP", "window": 2,
               "splits": {"train": "span-{SPAN}/train/*.tfrecord.gz",
                          "eval": "span-{SPAN}/eval/*.tfrecord.gz"}},
      "label": {"name": "brightness", "kind": "regression"},
      "features": {"image": {"kind": "image", "encoding": "raw", "height": 8, "width": 8,
                             "channels": 1}},
      # Measured: eval RMSE 0.013 to 0.017 after 60 steps; predicting the
      # mean scores 0.033 (the label's spread), which this refuses.
      "evaluation": {"metric": "rmse", "threshold": 0.025}}


def names_plain(root) -> dict:
  """480 digits in one folder: a 12x12 RGB JPEG of each, and tabular
  features with gaps; the label is the digit's name."""
  import tensorflow as tf
  images, labels = load_images()
  rows = []
  for i in range(480):
    pixels = images[i]
    rgb = np.repeat(np.kron(pixels, np.ones((2, 2), np.uint8))[:12, :12, None], 3, axis=2)
    rows.append({
        "photo": [tf.io.encode_jpeg(rgb).numpy()],
        "digit": [NAMES[labels[i]].encode()],
        "ink": None if i % 4 == 0 else [float((pixels > 0).mean())],
        "strokes": None if i % 3 == 0 else [int((pixels > 127).sum())],
        "halves": [int((pixels[:4] > 0).sum()), int((pixels[4:] > 0).sum())],
        "corner": None if i % 5 == 0 else [int(pixels[0, 0] > 0) + 2 * int(pixels[7, 7] > 0)],
        "row_mean": [float(r.mean() / 255.0) for r in pixels if r.any()],
    })
  write_rows(rows, str(root / "local"), "digits")
  return {
      "name": "names",
      "data": {"compression": "GZIP", "pattern": "*.tfrecord.gz",
               "hash_buckets": {"train": 3, "eval": 1}},
      "label": {"name": "digit", "classes": NAMES},
      "features": {
          "photo": {"kind": "image", "encoding": "jpeg", "height": 8, "width": 8,
                    "channels": 3},
          "ink": {"kind": "numeric", "dtype": "float", "required": False},
          "strokes": {"kind": "numeric", "dtype": "int", "required": False, "default": 0},
          "halves": {"kind": "numeric", "dtype": "int", "length": 2},
          "corner": {"kind": "categorical", "dtype": "int", "required": False},
          "row_mean": {"kind": "sequence", "dtype": "float", "max_length": 8}},
      # Measured: 0.976 eval accuracy after 60 steps; chance is 0.1.
      "evaluation": {"threshold": 0.7}}


CELLS = {"raw-regression-spans": raw_regression_spans, "names-plain": names_plain}
# (backend version, logs published) each cell is fed as.
FEEDING = {"names-plain": ((2, 5), True), "raw-regression-spans": ((2, 17), False)}
# Each cell trains on two workers on the stand-in cluster
# (tests/fakes/standin_cluster.py), one engine each: the compiled Trainer
# step launches them.
WORKERS = {"names-plain": ["--train-workers", "2", "--train-engine", "trainjob"],
           "raw-regression-spans": ["--train-workers", "2", "--train-engine", "tfjob"]}


@pytest.fixture(scope="module", params=sorted(CELLS))
def cell(request, tmp_path_factory):
  root = tmp_path_factory.mktemp(request.param)
  decl = CELLS[request.param](root)
  with s3_server(buckets=("pipelines", "data", "serving")) as (endpoint, client), \
      StandInCluster(str(root)) as cluster:
    cluster.store.secrets.update(SECRETS)
    upload_folder(client, str(root / "local"), "s3://data/cell")
    decl["data"]["root"] = "s3://data/cell"
    (root / "cell.yaml").write_text(yaml.safe_dump(decl))
    assert kubeflow([
        "compile", "--dataset", str(root / "cell.yaml"), "--pipeline-name", "cell",
        "--image", "local/tfrecord-pipeline:test", "--pipeline-root", "s3://pipelines/root",
        "--data-root", "s3://data/cell", "--serving-dir", "s3://serving/cell",
        "--skip-data-check", "--output-dir", str(root / "compiled"), "--train-steps", "60",
        *[a for k, v in env(endpoint).items() if not k.startswith("AWS_")
          for a in ("--env", f"{k}={v}")], "--env", "AWS_REGION=us-east-1",
        "--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID",
        "--secret-env", "s3-creds:secretkey=AWS_SECRET_ACCESS_KEY",
        *WORKERS.get(request.param, [])]) == 0
    version, logs = FEEDING[request.param]
    backend = Backend(str(root / "backend"), client, secrets=SECRETS, user=NOBODY,
                      cluster=cluster, version=version, publish_logs=logs)
    try:  # the root the UI fills in from the spec
      run = backend.run(str(root / "compiled" / "pipeline.yaml"), {},
                        log_dir=str(root / "logs"), run_id="cell-1",
                        pipeline_root="s3://pipelines/root")
    finally:
      backend.close()
    serving = download(client, "s3://serving/cell", root / "serving")
    cache = client.list_objects_v2(Bucket="pipelines", Prefix="root/analyzer_cache/")
    logs = {task: (art["uri"], read(client, art["uri"]))
            for (task, key), art in run.outputs.items() if key == "executor-logs"}
    bucket, _, prefix = run.outputs[("ImportExampleGen", "examples")]["uri"][5:].partition("/")
    examples = client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")
    trainer = run.outputs[("Trainer", "model")]["uri"][5:].partition("/")
    exports = [o["Key"] for o in client.list_objects_v2(
        Bucket=trainer[0], Prefix=trainer[2] + "/").get("Contents", [])
        if o["Key"].endswith("saved_model.pb")]
    export = client.get_object(Bucket=trainer[0], Key=exports[0])["Body"].read() \
        if exports else b""
    yield {"name": request.param, "root": root, "run": run, "serving": serving,
           "cluster": cluster, "exports": exports, "export_bytes": export,
           "engine": WORKERS[request.param][-1], "logs": logs,
           "cache": [o["Key"] for o in cache.get("Contents", [])],
           "splits": {o["Key"][len(prefix) + 1:].split("/")[0]
                      for o in examples.get("Contents", [])}}


def test_every_step_runs_and_the_model_is_pushed(cell):
  assert set(steps(cell["run"]).values()) == {"EXECUTED"}, cell["run"].states
  versions = [v for v in os.listdir(cell["serving"]) if v.isdigit()]
  assert len(versions) == 1, os.listdir(cell["serving"])
  version, published = FEEDING[cell["name"]]
  logs = cell["logs"]
  assert sorted(logs) == (sorted(steps(cell["run"])) if published else []), sorted(logs)
  for task, (uri, text) in logs.items():
    # Before 2.16.1 the URI carries no retry index (qualifyExecutorLogsURI).
    assert version < (2, 16, 1) and uri.endswith("/executor-logs"), uri
    # The launcher's copy of the container's output, whole.
    assert text == (cell["root"] / "logs" / f"{task}.log").read_text(), (task, text[-1500:])
  if published:
    assert "step finished" in logs["ImportExampleGen"][1], logs["ImportExampleGen"][1][-1500:]


def test_spans_are_windowed_and_compared_and_plain_data_is_split_by_hash(cell):
  if cell["name"] == "names-plain":
    assert "SpanWindow" not in cell["run"].states and "DriftGate" not in cell["run"].states
    # 480 records hashed into 3 train buckets and 1 eval bucket.
    assert set(cell["splits"]) == {"Split-train", "Split-eval"}, cell["splits"]
    return
  values = cell["run"].parameters["SpanWindow"]
  assert json.loads(values["example_splits"]) == ["eval_span1", "eval_span2"], values
  log = (cell["root"] / "logs" / "DriftGate.log").read_text()
  assert "drift: train_span2 against span 1" in log, log[-2000:]


def test_transform_keeps_no_cache_without_analyzers_or_spans(cell):
  spans = sorted({key.split("/")[3] for key in cell["cache"]
                  if key.count("/") > 3})
  # Raw images alone have no analyzer: nothing to cache, and on S3 no
  # folder. Without spans there is no cache. (The digits' analyzers are
  # cached per span: tests/e2e/test_kubeflow_steps.py.)
  assert spans == [], cell["cache"]


def test_the_served_model_answers_eval_records_in_the_labels_shape(cell):
  import tensorflow as tf
  log = (cell["root"] / "logs" / "ServingCheck.log").read_text()
  assert "serving check: passed (batch 1 p50 " in log, log[-2000:]
  (version,) = [v for v in os.listdir(cell["serving"]) if v.isdigit()]
  serve = tf.saved_model.load(os.path.join(cell["serving"], version)) \
      .signatures["serving_default"]
  files = sorted(str(f) for f in (cell["root"] / "local").rglob("*.tfrecord.gz")
                 if "eval" in str(f) or cell["name"] == "names-plain")
  records = [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP").take(16)]
  out = {k: v.numpy() for k, v in serve(examples=tf.constant(records)).items()}
  if cell["name"] == "raw-regression-spans":
    assert out["value"].shape == (16, 1) and np.isfinite(out["value"]).all(), out
  else:
    assert out["probabilities"].shape == (16, 10), out
    np.testing.assert_allclose(out["probabilities"].sum(axis=1), 1.0, atol=1e-4)
  if cell["name"] == "names-plain":
    assert [c.decode() for c in out["all_classes"][0]] == NAMES, out["all_classes"][0]


def test_two_workers_train_the_compiled_model_each_on_its_own_files(cell):
  """The Trainer step launched a job of two workers (names-plain a TrainJob,
  raw-regression-spans a TFJob) on the stand-in cluster, from inputs on
  s3://: each read its own shard, only the chief exported (the Evaluator
  judged and the serving check loaded that export: every step ran), with no
  op pinned to a worker's device (tfx#2894), and the job was deleted."""
  engine = cell["engine"]
  api, plural, pods = {"trainjob": ("trainer.kubeflow.org/v1alpha1", "trainjobs",
                                    "{}-node-0-*.log"),
                       "tfjob": ("kubeflow.org/v1", "tfjobs", "{}-worker-*.log")}[engine]
  store = cell["cluster"].store
  (name,) = store.created[plural]
  log = (cell["root"] / "logs" / "Trainer.log").read_text()
  assert f"training job {name}: 2 workers on {engine}" in log, log[-3000:]
  assert f"training job {name}: succeeded" in log, log[-3000:]
  shards = {}
  for path in cell["root"].glob(pods.format(name)):
    found = re.search(r"input shard (\d) of 2: (.*)", path.read_text())
    assert found, path.read_text()[-3000:]
    shards[found.group(1)] = found.group(2)
  assert sorted(shards) == ["0", "1"], shards
  assert [k.rsplit("/", 2)[-2] for k in cell["exports"]] == ["Format-Serving"], cell["exports"]
  assert not re.search(rb"/job:worker/replica:\d+/task:\d+/device:", cell["export_bytes"])
  assert store.list(api, "kubeflow", plural) == [], f"the {engine} was not deleted"

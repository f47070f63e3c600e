"""Data kinds on the compiled pipeline, fed as the open-source backend feeds
it, with everything on s3://: cells chosen for the branches the code takes
on kind and store that the digits (tests/test_kubeflow_steps.py: encoded
image, numeric, categorical, variable-length, class ids, spans, Transform
with analyzers) do not.

- raw-image spans: an image stored as raw pixel bytes, alone, over two
  spans. Its preprocessing has no analyzer, so Transform's analyzer cache
  output holds no object, and on S3 a prefix without an object does not
  exist (this cell failed at Transform before components/transform.py
  `publish` stopped assuming the folder); the input pipeline decodes raw
  bytes; the serving check sends raw pixels; DriftGate compares span 2
  with span 1.

Stand-ins as in tests/test_kubeflow_steps.py: tests/kfp_backend.py (every
step as uid 65534 without capabilities) and moto's S3 server. Tiny data, a
few training steps: what is judged is that every step runs and the model is
pushed and serves, not its accuracy.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from convert.digits import load_images
from kubeflow.cli import main as kubeflow
from tests.conftest import REPO
from tests.kfp_backend import Backend
from tests.s3_server import env, s3_server, upload_folder
from tests.test_kubeflow_steps import NOBODY, SECRETS, download, steps

pytestmark = pytest.mark.e2e


def raw_image_spans(root) -> dict:
  """Two spans of raw 8x8 digits and nothing else; returns the declaration."""
  images, labels = load_images()
  for span, part in ((1, slice(0, 400)), (2, slice(400, 800))):
    arrays = root / f"span{span}.npz"
    np.savez(arrays, images=images[part, ..., None], labels=labels[part])
    subprocess.run([sys.executable, "-m", "cli", "convert", "arrays", str(arrays),
                    "--output", str(root / "local"), "--span", str(span),
                    "--eval-percent", "25", "--workers", "1"],
                   cwd=REPO, check=True, capture_output=True)
  decl = yaml.safe_load((root / "local" / "dataset.yaml").read_text())
  decl["data"]["window"] = 2
  decl["evaluation"] = {"threshold": 0.3}
  return decl


CELLS = {"raw-image-spans": raw_image_spans}


@pytest.fixture(scope="module", params=sorted(CELLS))
def cell(request, tmp_path_factory):
  root = tmp_path_factory.mktemp(request.param)
  decl = CELLS[request.param](root)
  with s3_server(buckets=("pipelines", "data", "serving")) as (endpoint, client):
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
        "--secret-env", "s3-creds:secretkey=AWS_SECRET_ACCESS_KEY"]) == 0
    backend = Backend(str(root / "backend"), client, secrets=SECRETS, user=NOBODY)
    run = backend.run(str(root / "compiled" / "pipeline.yaml"), {},
                      log_dir=str(root / "logs"), run_id="cell-1")
    serving = download(client, "s3://serving/cell", root / "serving")
    cache = client.list_objects_v2(Bucket="pipelines", Prefix="root/analyzer_cache/")
    yield {"root": root, "run": run, "serving": serving,
           "cache": [o["Key"] for o in cache.get("Contents", [])]}


def test_every_step_runs_and_the_model_is_pushed(cell):
  assert set(steps(cell["run"]).values()) == {"EXECUTED"}, cell["run"].states
  versions = [v for v in os.listdir(cell["serving"]) if v.isdigit()]
  assert len(versions) == 1, os.listdir(cell["serving"])


def test_the_window_holds_both_spans_and_drift_compared_them(cell):
  values = cell["run"].parameters["SpanWindow"]
  assert json.loads(values["example_splits"]) == ["eval_span1", "eval_span2"], values
  log = (cell["root"] / "logs" / "DriftGate.log").read_text()
  assert "drift: train_span2 against span 1" in log, log[-2000:]


def test_the_serving_check_sent_raw_pixels_and_passed(cell):
  log = (cell["root"] / "logs" / "ServingCheck.log").read_text()
  assert "serving check: passed (batch 1 p50 " in log, log[-2000:]

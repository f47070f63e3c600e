"""Fixtures of the training engines' end-to-end tests (test_train_workers.py),
the digits in a stand-in bucket for the compiled pipeline's, and a drifted
span of them (test_retraining.py, test_kubeflow_steps.py), and the
`kfp-launcher` ConfigMap compile writes, applied as docs/kubeflow.md says."""

import os
from collections import Counter

import numpy as np
import pytest
import yaml

from dataset.convert import digits
from dataset.convert.digits import write_digits
from dataset.convert.rows import write_rows
from store.metadata import outcome
from tests.conftest import DIGITS_SCHEMA, digits_raw, span_data
from tests.fakes.s3_server import upload_folder
from tests.fakes.standin_cluster import NAMESPACE, StandInCluster
from tests.fakes.vertex_api import StandInVertex
from tests.runs import run_local


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
  root = tmp_path_factory.mktemp("workers")
  args = ["--output-dir", str(root / "out"), "--data-root", str(root / "data")]
  code, out, err = run_local(*args, "--train-workers", "2", "--train-steps", "200")
  metadata = str(root / "out" / "digits" / "metadata.sqlite")
  return {"code": code, "stdout": out, "stderr": err, "args": args, "root": root,
          "outcome": outcome.read_outcome(metadata, "digits") if code == 0 else None}


@pytest.fixture
def cluster(tmp_path):
  """The stand-in cluster (tests/fakes/standin_cluster.py), the shipped
  runtime installed, the run's Workflow owning the Trainer step's pod."""
  with StandInCluster(str(tmp_path)) as standin:
    yield standin


@pytest.fixture
def vertex(tmp_path):
  """The stand-in Vertex AI (tests/fakes/vertex_api.py): the real aiplatform
  client over REST, the step's project and token from a metadata server."""
  with StandInVertex(str(tmp_path)) as standin:
    yield standin


def kfp_launcher(compiled, cluster=None, **changed) -> dict:
  """`kubectl apply -f COMPILED/kfp-launcher.yaml`: into the stand-in
  cluster's namespace when there is one; returns the ConfigMap's data (for
  a Backend's `launcher_config`), with `changed` keys set as a user would
  edit them."""
  with open(os.path.join(str(compiled), "kfp-launcher.yaml"), encoding="utf-8") as f:
    config = yaml.safe_load(f)
  config["data"].update(changed)
  if cluster is not None:
    cluster.store.create(("v1", NAMESPACE, "configmaps", config["metadata"]["name"]), config)
  return dict(config["data"])


def digits_in_bucket(root, s3, scheme: str = "s3", window: int = 1) -> dict:
  """The digits as span 1 under s3://data/digits (moto), and their
  declaration (raw, to edit before writing) over `scheme`://data/digits, a
  window of `window` spans."""
  write_digits(str(root / "local" / "span-1"))
  upload_folder(s3, str(root / "local"), "s3://data/digits")
  raw = digits_raw()
  raw["data"] = span_data(f"{scheme}://data/digits", window)
  raw["schema"] = DIGITS_SCHEMA
  return raw


def write_drifted_span(root: str, span: int, start: int, stop: int) -> None:
  """Digits whose `ink` moved by two standard deviations and whose most
  common `shape` is renamed, as a recalibrated sensor and a renamed
  category would make them."""
  images, labels = digits.load_images()
  rows = [digits.digit_features(images[i], labels[i]) for i in range(start, stop)]
  ink = np.array([r["ink"][0] for r in rows])
  common = Counter(r["shape"][0] for r in rows).most_common(1)[0][0]
  for r in rows:
    r["ink"] = [float(r["ink"][0] + 2 * ink.std())]
    r["shape"] = [b"renamed" if r["shape"][0] == common else r["shape"][0]]
    # And what the digits mean shifted (a relabelled source): the served
    # model degrades on this span.
    r["label"] = [(r["label"][0] + 1) % 10]
  write_rows(rows, os.path.join(root, f"span-{span}"), prefix="digits",
             eval_percent=digits.EVAL_PERCENT,
             keys=[f"digits-{i}" for i in range(start, stop)])
  return common.decode()

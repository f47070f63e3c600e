"""Fixtures of the training engines' end-to-end tests (test_train_workers.py),
and the digits in a stand-in bucket for the compiled pipeline's."""

import pytest

from dataset.convert.digits import write_digits
from store.metadata import outcome
from tests.conftest import DIGITS_SCHEMA, digits_raw, span_data
from tests.fakes.s3_server import upload_folder
from tests.fakes.standin_cluster import StandInCluster
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

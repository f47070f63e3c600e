"""Fixtures of the training engines' end-to-end tests (test_train_workers.py)."""

import pytest

from metadata import outcome
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

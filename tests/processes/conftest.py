"""One S3 stand-in per test process (moto's server), for tests whose own
process writes to s3:// through TensorFlow: tensorflow-io reads S3_ENDPOINT
once, at its first use in a process, so every such test of a process must
meet the same server. Tests that only start processes may start their own."""

import pytest

from runtime import storage
from tests.fakes.s3_server import env as s3_env
from tests.fakes.s3_server import s3_server


@pytest.fixture(scope="session")
def _s3_session():
  with s3_server(["models"]) as (endpoint, client):
    yield endpoint, client


@pytest.fixture
def s3(_s3_session, monkeypatch):
  """(endpoint, boto3 client) of the process's S3 stand-in, bucket `models`,
  with this test's environment pointing at it and s3:// enabled."""
  endpoint, client = _s3_session
  for k, v in s3_env(endpoint).items():
    monkeypatch.setenv(k, v)
  storage.enable(["s3://models"])
  return endpoint, client


def pytest_sessionfinish(session, exitstatus):
  session.config.stash[_STATUS] = int(exitstatus)


def pytest_unconfigure(config):
  """Once s3:// was loaded in this process, its shutdown aborts (exit 134)
  in tensorflow-io's destructors: leave as the commands do (runtime/storage.py
  `exit`), with the session's status."""
  if storage.s3_loaded():
    storage.exit(config.stash.get(_STATUS, 0))


_STATUS = pytest.StashKey[int]()

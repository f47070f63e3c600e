"""The fast tests: each in this process, in milliseconds to a second, none
starting a pipeline or a second process (tests/in_process.py), none
training a model or running a Beam pipeline (those are in
tests/integration/). tests/unit/test_architecture.py checks the tree
mirrors the code."""

import pytest

from tests import in_process


@pytest.fixture(autouse=True)
def _in_this_process(monkeypatch):
  in_process.refuse_processes(monkeypatch, "tests/unit/")

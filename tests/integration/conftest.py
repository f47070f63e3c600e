"""Tests that run TensorFlow, TFT or TFMA for real in pytest's process: a
model trained and exported, a Beam pipeline of Transform or the Evaluator,
seconds each. Like tests/unit/, none starts a second process or a pipeline
(tests/in_process.py); at the same mirrored paths."""

import pytest

from tests import in_process


@pytest.fixture(autouse=True)
def _in_this_process(monkeypatch):
  in_process.refuse_processes(monkeypatch, "tests/integration/")

"""The fast tests: each in this process, none starts a pipeline or a second
process (tests/unit/test_architecture.py checks the tree mirrors the code).
A test that needs one belongs in tests/processes/ (a module's tests that
start processes) or tests/e2e/ (whole runs)."""

import multiprocessing
import platform
import subprocess

import pytest


def _refuse(what: str):
  def refused(*args, **kwargs):
    raise AssertionError(f"a test under tests/unit/ {what}: expected none (it belongs in "
                         f"tests/processes/ or tests/e2e/), found {args[1:2] or args[:1]}")
  return refused


@pytest.fixture(autouse=True)
def _in_this_process(monkeypatch):
  # Imported first: TFX's import asks `uname -p` once (platform.processor,
  # cached), which is not the test's doing.
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner
  platform.processor()
  monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("starts a process"))
  monkeypatch.setattr(multiprocessing.Process, "start", _refuse("starts a process"))
  monkeypatch.setattr(LocalDagRunner, "run", _refuse("runs a pipeline"))

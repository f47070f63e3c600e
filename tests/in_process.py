"""The rule of tests/unit/ and tests/integration/: each test runs in
pytest's process; none starts a second process or a pipeline. A test that
needs one belongs in tests/processes/ (a module's tests that start
processes) or tests/e2e/ (whole runs). Each folder's conftest.py imports
the fixture below."""

import multiprocessing
import os
import platform
import subprocess

import pytest


def _refuse(folder: str, what: str):
  def refused(*args, **kwargs):
    raise AssertionError(f"a test under {folder} {what}: expected none (it belongs in "
                         f"tests/processes/ or tests/e2e/), found {args[1:2] or args[:1]}")
  return refused


@pytest.fixture(autouse=True)
def in_this_process(monkeypatch, request):
  """Makes starting a process or running a pipeline fail the test."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  folder = "/".join(os.path.relpath(str(request.path), root).split(os.sep)[:2]) + "/"
  # Imported first: TFX's import asks `uname -p` once (platform.processor,
  # cached), and matplotlib (which keras imports) runs `fc-list` once per
  # machine to cache its font list; neither is the test's doing.
  import matplotlib.font_manager  # noqa: F401
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner
  platform.processor()
  monkeypatch.setattr(subprocess.Popen, "__init__", _refuse(folder, "starts a process"))
  monkeypatch.setattr(multiprocessing.Process, "start", _refuse(folder, "starts a process"))
  monkeypatch.setattr(LocalDagRunner, "run", _refuse(folder, "runs a pipeline"))

"""`python -m commands.kubeflow retention` on runs in Vertex AI's layout,
`<root>/<project number>/<job id>/<task>_<id>/` (runtime/run_layout.py),
written with plain files as the steps write them there
(tests/unit/store/retention/test_folders.py's Folder). The open-source
layout's command is tested there; the compiled step on the stand-in
Vertex AI in tests/e2e/test_vertex_pipelines.py."""

import os

import pytest

from commands.kubeflow.cli import main as kubeflow
from runtime import run_layout
from tests.unit.store.retention.test_folders import PROJECT_NUMBER, Folder, _spec


@pytest.fixture
def vertex(tmp_path, monkeypatch):
  """Two finished runs of `digits` in Vertex's layout, the first's outputs
  used by nobody once the second is kept."""
  monkeypatch.setenv(run_layout.PIPELINE_ENV, "digits")  # the steps' records name it
  f = Folder(tmp_path, run_layout.VERTEX)
  first = f.full_run("job1", "aaa")
  f.full_run("job2", "bbb")
  return f, first


def _vertex_spec(tmp_path, f: Folder) -> str:
  """The spec as `compile --backend vertex` opens it (kubeflow/compile/backend.py)."""
  path = _spec(tmp_path, f, epoch_wired=True)
  with open(path, encoding="utf-8") as file:
    text = file.read()
  with open(path, "w", encoding="utf-8") as file:
    file.write("# backend: vertex\n" + text)
  return path


@pytest.mark.parametrize("compiled_for_vertex", [True, False])
def test_runs_in_vertexs_layout_are_listed_then_deleted(tmp_path, vertex, capsys,
                                                         compiled_for_vertex):
  f, first = vertex
  spec, flags = ((_vertex_spec(tmp_path, f), []) if compiled_for_vertex
                 else (_spec(tmp_path, f, epoch_wired=True), ["--backend", "vertex"]))
  assert kubeflow(["retention", "--spec", spec, "--keep", "1", *flags]) == 0
  out = capsys.readouterr().out
  assert "nothing to keep or delete" not in out, out
  assert "keeping the newest 1 of 2 runs" in out and "would delete" in out, out
  assert first["statistics"] in out and os.path.exists(first["statistics"]), out
  assert kubeflow(["retention", "--spec", spec, "--keep", "1", "--delete", *flags]) == 0
  assert not os.path.exists(first["statistics"]), capsys.readouterr().out


def test_a_root_shared_by_two_projects_needs_the_project(tmp_path, vertex, capsys):
  f, first = vertex
  other = tmp_path / "root" / "999999999999" / "job9"
  other.mkdir(parents=True)
  spec = _vertex_spec(tmp_path, f)
  assert kubeflow(["retention", "--spec", spec, "--keep", "1"]) == 2
  err = capsys.readouterr().err.strip()
  assert err.startswith("error: --project:") and "\n" not in err, err
  assert f"{PROJECT_NUMBER}, 999999999999" in err, err
  assert kubeflow(["retention", "--spec", spec, "--keep", "1", "--delete",
                   "--project", PROJECT_NUMBER]) == 0
  assert not os.path.exists(first["statistics"]) and other.is_dir(), capsys.readouterr().out


def test_a_vertex_root_without_runs_says_so(tmp_path, vertex, capsys):
  f, _ = vertex
  spec = _vertex_spec(tmp_path, f)
  empty = tmp_path / "empty"
  empty.mkdir()
  assert kubeflow(["retention", "--spec", spec, "--keep", "1",
                   "--pipeline-root", str(empty)]) == 0
  assert "nothing to keep or delete" in capsys.readouterr().out


@pytest.fixture
def resource_manager(monkeypatch):
  """Resource Manager as the user's credentials see it: user-project's
  number, and a refusal for any other project."""
  import google.auth
  from google.api_core import exceptions
  from google.auth.credentials import AnonymousCredentials
  from google.cloud.aiplatform.utils import resource_manager_utils

  def number(project, credentials=None):
    assert isinstance(credentials, AnonymousCredentials)  # the user's, as found
    if project != "user-project":
      raise exceptions.PermissionDenied(f"resourcemanager.projects.get on {project}")
    return int(PROJECT_NUMBER)
  monkeypatch.setattr(google.auth, "default", lambda: (AnonymousCredentials(), None))
  monkeypatch.setattr(resource_manager_utils, "get_project_number", number)


def test_a_project_id_is_read_as_its_number_with_the_users_credentials(
    tmp_path, vertex, resource_manager, capsys):
  f, first = vertex
  (tmp_path / "root" / "999999999999").mkdir()
  spec = _vertex_spec(tmp_path, f)
  assert kubeflow(["retention", "--spec", spec, "--keep", "1",
                   "--project", "user-project"]) == 0
  assert first["statistics"] in capsys.readouterr().out
  assert kubeflow(["retention", "--spec", spec, "--keep", "1", "--project", "theirs"]) == 1
  err = capsys.readouterr().err.strip()
  # Resource Manager answers a project that does not exist so too: --project, not a role.
  assert err.startswith("error: reading the number of project theirs failed: Resource "
                        "Manager refused to read project theirs (") and "\n" not in err, err
  assert "check --project theirs" in err and "aiplatform.user" not in err, err

"""A multi-user namespace's prefixes: a run sent to another namespace than
its paths belong to is named before it runs."""

from tests.doctor_install import Install, doctor, only, spec


def test_paths_outside_the_namespace_prefixes_fail_naming_the_prefixes(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", namespace="team-a")
  with Install(tmp_path, monkeypatch, namespace="team-b", spec_path=path):
    status, found = doctor(capsys, path, "--namespace", "team-b")
  assert status == 1
  line = only(found, "FAIL the run's paths within namespace team-b's prefixes")
  assert ("the pipeline root s3://mlpipeline/private/team-a/p: the profile namespace team-b's "
          "keys") in line, line
  assert "s3://mlpipeline/private-artifacts/team-b/" in line, line
  assert "fix: compile with paths under s3://mlpipeline/private/team-b/" in line, line


def test_paths_within_the_prefixes_are_ok_and_a_single_user_install_has_none(
    tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", namespace="team-a")
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 0
  assert only(found, "ok  the run's paths within namespace team-a's prefixes (the pipeline "
                     "root, the data root, the serving dir)")
  single = spec(tmp_path / "s", namespace=None)
  with Install(tmp_path, monkeypatch, namespace="kubeflow", spec_path=single):
    status, found = doctor(capsys, single)
  assert status == 0, found
  assert not [line for line in found if "prefixes" in line], found


def test_a_spec_sent_to_another_namespace_than_compiled_for_names_both(
    tmp_path, monkeypatch, capsys):
  """A spec compiled for team-a, checked against `kubeflow` on team-a's
  multi-user install: the first line of the cluster's says why the store's
  fail. On a single-user install, where `kubeflow` holds keys to every
  prefix, the same spec passes with no such line."""
  path = spec(tmp_path / "c", namespace="team-a")
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path, "--namespace", "kubeflow")
  assert status == 1
  line = only(found, "FAIL the namespace the run goes to (kubeflow)")
  assert "the spec was compiled for namespace team-a" in line, line
  assert ("fix: run it in team-a (--namespace team-a), or compile it again with --namespace "
          "kubeflow") in line, line
  failing = [x for x in found if x.startswith("FAIL")]
  assert failing[0] == line and len(failing) > 1, found
  (tmp_path / "s").mkdir()
  with Install(tmp_path / "s", monkeypatch, namespace="kubeflow", spec_path=path):
    status, found = doctor(capsys, path, "--namespace", "kubeflow")
  assert status == 0 and not [x for x in found if "the run goes to" in x], found

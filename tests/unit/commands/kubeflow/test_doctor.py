"""`submit` and `schedule` run doctor's checks first: a failure stops them
before anything is sent; `--no-check` skips them."""

from commands.kubeflow.cli import main
from tests.doctor_install import Install, spec
from tests.fakes import kfp_server

UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: whatever reaches it fails


def test_submit_stops_at_a_failed_check_and_no_check_skips_them(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    install.store.delete(("v1", "team-a", "configmaps", "kfp-launcher"))
    capsys.readouterr()
    assert main(["submit", "--spec", path, "--host", UNREACHABLE]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("FAIL the launcher's store for "), err
    assert err[1] == ("error: doctor: 1 check(s) failed (above), so nothing was sent; fix "
                      "them, or submit with --no-check")
    assert main(["submit", "--spec", path, "--host", UNREACHABLE, "--no-check"]) == 1
  # Past the checks, to the API server.
  assert capsys.readouterr().err.startswith(
      f"error: cannot reach Kubeflow Pipelines at {UNREACHABLE}")


def test_schedule_stops_at_a_failed_check_too(tmp_path, monkeypatch, capsys):
  """A schedule whose every run would fail at its first step is not made."""
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    install.store.delete(("v1", "team-a", "configmaps", "kfp-launcher"))
    capsys.readouterr()
    flags = ["schedule", "--spec", path, "--host", UNREACHABLE, "--name", "nightly",
             "--cron", "0 3 * * *"]
    assert main(flags) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("FAIL the launcher's store for "), err
    assert err[1] == ("error: doctor: 1 check(s) failed (above), so nothing was sent; fix "
                      "them, or schedule with --no-check")
    assert main(flags + ["--no-check"]) == 1
  assert capsys.readouterr().err.startswith(
      f"error: cannot reach Kubeflow Pipelines at {UNREACHABLE}")


def _dead_kubeconfig(tmp_path, monkeypatch) -> None:
  """A kubeconfig whose cluster does not answer (stopped, or behind a VPN)."""
  path = tmp_path / "kubeconfig"
  path.write_text(
      '{"apiVersion": "v1", "kind": "Config", "current-context": "c", "clusters": [{"name": '
      f'"c", "cluster": {{"server": "{UNREACHABLE}"}}}}], "users": [{{"name": "u", "user": '
      '{"token": "t"}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}')
  monkeypatch.setenv("KUBECONFIG", str(path))


def test_a_cluster_that_does_not_answer_is_one_line_not_a_traceback(tmp_path, monkeypatch,
                                                                    capsys):
  path = spec(tmp_path / "c")
  _dead_kubeconfig(tmp_path, monkeypatch)
  capsys.readouterr()
  assert main(["doctor", "--spec", path]) == 1
  found = capsys.readouterr().out.splitlines()
  assert found[-1].startswith(
      f"FAIL the Kubernetes cluster: cannot reach the Kubernetes API server at {UNREACHABLE} "
      "(your kubeconfig's current context): "), found
  assert found[-1].endswith("; fix: point KUBECONFIG at the install's cluster (kubectl config "
                            "use-context ...)"), found
  # submit needs no cluster: its checks are not made, and it goes on to the API.
  assert main(["submit", "--spec", path, "--host", UNREACHABLE]) == 1
  assert capsys.readouterr().err.startswith(
      f"error: cannot reach Kubeflow Pipelines at {UNREACHABLE}")


def test_a_multi_user_api_asked_without_a_namespace_names_the_one_compiled_for(
    tmp_path, monkeypatch, capsys):
  """Kubeflow 1.11.0's Pipelines (multi-user), a spec compiled with
  --namespace team-a, doctor run as the five steps show it (--host only)."""
  path = spec(tmp_path / "c")
  host, _, stop = kfp_server.serve(multi_user=True, version=(2, 15))
  try:
    with Install(tmp_path, monkeypatch, spec_path=path):
      capsys.readouterr()
      assert main(["doctor", "--spec", path, "--host", host]) == 1
  finally:
    stop()
  found = capsys.readouterr().out.splitlines()
  assert found[0] == (
      f"FAIL the Kubeflow Pipelines API: Kubeflow Pipelines at {host} is a multi-user install: "
      "expected --namespace, your profile's namespace, found none; fix: pass --namespace "
      "team-a, to doctor and to submit"), found

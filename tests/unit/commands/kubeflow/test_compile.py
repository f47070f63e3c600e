"""commands/kubeflow/compile.py in this process: a data root in a Cloud
Storage this machine cannot reach is one line, exit 2, as docs/kubeflow.md
and docs/debugging.md promise. (The compiled files: tests/unit/kubeflow/compile/;
compile's imports: tests/processes/commands/kubeflow/test_compile.py.)"""

import pytest
import tensorflow as tf

from commands.kubeflow.cli import main as kubeflow
from runtime import storage
from tests.conftest import DIGITS_YAML

# What TensorFlow's gs:// raised on this machine, without a route to Cloud Storage.
UNREACHABLE = ("Error executing an HTTP request: libcurl code 6 meaning 'Couldn't resolve "
               "host name', error details: Could not resolve host: www.googleapis.com")


@pytest.fixture
def no_cloud_storage(monkeypatch):
  """Every gs:// call fails as TensorFlow's does with Cloud Storage out of
  reach (here, whatever the machine's network)."""
  monkeypatch.setattr(storage, "_reachable", set())
  for name in ("exists", "glob", "stat", "listdir", "isdir", "walk", "GFile"):
    real = getattr(tf.io.gfile, name)

    def unreachable(path, *args, _real=real, **kwargs):
      if str(path).startswith("gs://"):
        raise tf.errors.FailedPreconditionError(None, None, UNREACHABLE)
      return _real(path, *args, **kwargs)
    monkeypatch.setattr(tf.io.gfile, name, unreachable)


def test_an_unreachable_data_root_is_one_line_and_exit_2(tmp_path, capsys, no_cloud_storage):
  code = kubeflow(["compile", "--dataset", DIGITS_YAML, "--data-root", "gs://bkt/data/digits",
                   "--image", "registry.example.com/p:1", "--pipeline-root", "gs://bkt/root",
                   "--output-dir", str(tmp_path)])
  err = capsys.readouterr().err
  assert code == 2, err
  assert err.splitlines() == [
      f"error: --data-root gs://bkt/data/digits: cannot reach Cloud Storage ({UNREACHABLE}); "
      "check this machine's network and proxy"], err
  assert not list(tmp_path.iterdir())


PROFILE_KEYS = ["--secret-env", "mlpipeline-minio-artifact:accesskey=AWS_ACCESS_KEY_ID",
                "--secret-env", "mlpipeline-minio-artifact:secretkey=AWS_SECRET_ACCESS_KEY"]
TEAM_A = {"--pipeline-root": "s3://mlpipeline/private/team-a/tfx",
          "--data-root": "s3://mlpipeline/private/team-a/data/digits",
          "--serving-dir": "s3://mlpipeline/private/team-a/serving/digits"}


@pytest.mark.parametrize("flag, outside", [("--pipeline-root", "s3://mlpipeline/tfx"),
                                           ("--data-root", "s3://mlpipeline/data/digits"),
                                           ("--serving-dir", "s3://serving/digits")])
def test_compile_for_a_profile_namespace_refuses_a_path_its_keys_do_not_reach(
    tmp_path, capsys, flag, outside):
  """On a multi-user install from 2.15 the profile's keys reach four
  prefixes of the bucket (kubeflow/pipelines `pipelines-profile-controller/
  sync.py`@2.17.0 lines 484-487): refused before anything is read."""
  paths = {**TEAM_A, flag: outside}
  code = kubeflow(["compile", "--dataset", DIGITS_YAML, "--image", "registry.example.com/p:1",
                   "--output-dir", str(tmp_path), "--namespace", "team-a",
                   "--env", "S3_ENDPOINT=http://seaweedfs.kubeflow:9000", *PROFILE_KEYS,
                   *[part for pair in paths.items() for part in pair]])
  err = capsys.readouterr().err
  assert code == 2, f"expected exit 2, found {code}: {err}"
  (line,) = err.splitlines()
  assert line.startswith(f"error: {flag} {outside}: the profile namespace team-a's keys (the "
                         f"mlpipeline-minio-artifact Secret the profile controller writes, "
                         f"Kubeflow Pipelines 2.15 and later) reach only "
                         f"s3://mlpipeline/artifacts/, s3://mlpipeline/private-artifacts/"
                         f"team-a/, s3://mlpipeline/private/team-a/, s3://mlpipeline/shared/"), \
      f"expected {flag} refused naming the prefixes, found {line!r}"
  assert not list(tmp_path.iterdir()), "expected nothing written"


def test_final_status_without_notify_is_one_line_and_exit_2(tmp_path, capsys):
  code = kubeflow(["compile", "--dataset", DIGITS_YAML, "--image", "registry.example.com/p:1",
                   "--pipeline-root", str(tmp_path / "root"), "--output-dir",
                   str(tmp_path / "out"), "--final-status"])
  err = capsys.readouterr().err
  assert code == 2, err
  assert err.splitlines() == [
      "error: --final-status: expected --notify URL too (or a spec compiled with it): the "
      "final status is the notice's input"], err
  assert not (tmp_path / "out").exists(), "a refused compile wrote its files"

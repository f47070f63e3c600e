"""`python -m commands.kubeflow doctor` as a user runs it, on a spec the
real compile wrote, against a stand-in install (tests/doctor_install.py)."""

import subprocess
import sys

from tests.conftest import REPO, compile_digits_spec
from tests.doctor_install import ENDPOINT, POOL, Install

PLACE = "s3://mlpipeline/private/team-a"
SELECTOR = "=".join(next(iter(POOL.items())))  # the stand-in's GPU pool


def _doctor(*args):
  proc = subprocess.run([sys.executable, "-m", "commands.kubeflow", "doctor", *args],
                        cwd=REPO, capture_output=True, text=True, timeout=300)
  return proc.returncode, proc.stdout.strip().splitlines(), proc.stderr


def test_doctor_passes_a_compiled_spec_on_a_clean_install_and_names_what_is_broken(
    tmp_path, monkeypatch):
  path = compile_digits_spec(
      tmp_path / "c", "--pipeline-root", f"{PLACE}/p", "--data-root", f"{PLACE}/d",
      "--serving-dir", f"{PLACE}/serving", "--namespace", "team-a", "--env",
      f"S3_ENDPOINT={ENDPOINT}", "--secret-env", "mlpipeline-minio-artifact:accesskey="
      "AWS_ACCESS_KEY_ID", "--secret-env", "mlpipeline-minio-artifact:secretkey="
      "AWS_SECRET_ACCESS_KEY", "--train-workers", "2", "--train-engine", "trainjob",
      "--kserve", "digits", "--kserve-service-account", "s3-reader", "--resource", "Trainer:gpus=2", "--node-selector",
      f"Trainer:{SELECTOR}", "--toleration", "Trainer:nvidia.com/gpu=present:NoSchedule")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    status, found, err = _doctor("--spec", path)
    assert status == 0, (found, err[-2000:])
    unreached = [x for x in found if x.startswith("not checked the pipeline root, the data "
                                                  "root, the serving dir")]
    assert len(unreached) == 1 and "--store-endpoint" in unreached[0], found
    found = [x for x in found if x not in unreached]
    assert len(found) == 11 and all(x.startswith("ok  ") for x in found), found
    assert "ok  the TrainingRuntime tfrecord-pipeline-tensorflow in namespace team-a" in found
    assert "ok  nodes for the 2 trainjob workers (each 2 nvidia.com/gpu)" in found
    assert ("ok  the TrainJob's placement of its workers (nodeSelector, tolerations, "
            "serviceAccountName): spec.runtimePatches (Kubeflow Trainer 2.2 and later)") in found
    install.store.delete(("v1", "team-a", "configmaps", "kfp-launcher"))
    status, found, _ = _doctor("--spec", path)
  assert status == 1
  (line,) = [x for x in found if x.startswith("FAIL")]
  assert line.startswith(f"FAIL the launcher's store for {PLACE}/p (kfp-launcher ConfigMap, "
                         f"namespace team-a): expected `providers`"), line


def test_a_file_that_is_not_a_spec_is_bad_input(tmp_path):
  (tmp_path / "pipeline.yaml").write_text("just: a mapping\n")
  status, found, err = _doctor("--spec", str(tmp_path / "pipeline.yaml"))
  assert (status, found) == (2, [])
  assert err.startswith(f"error: --spec {tmp_path / 'pipeline.yaml'}: expected a pipeline "
                        "spec written by 'compile'"), err

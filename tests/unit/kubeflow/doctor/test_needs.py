"""What doctor reads a compiled spec to need."""

import json

import yaml

from commands.kubeflow import runs
from kubeflow.doctor import needs
from tests.doctor_install import spec


def test_the_spec_says_its_namespace_paths_keys_engine_and_kserve(tmp_path):
  path = spec(tmp_path / "c", engine="tfjob", kserve=True)
  found = needs.read(runs.load_spec(path), path)
  assert found.namespace == "team-a"  # the compiled one, without --namespace
  assert found.places == {"the pipeline root": "s3://mlpipeline/private/team-a/p",
                          "the data root": "s3://mlpipeline/private/team-a/d",
                          "the serving dir": "s3://mlpipeline/private/team-a/serving"}
  assert found.secret_env == [("mlpipeline-minio-artifact", "accesskey", "AWS_ACCESS_KEY_ID"),
                              ("mlpipeline-minio-artifact", "secretkey",
                               "AWS_SECRET_ACCESS_KEY")]
  assert (found.engine, found.kserve) == ("tfjob", True)
  assert found.launcher_file == str(tmp_path / "c" / "kfp-launcher.yaml")
  assert found.profile() == "team-a"
  with open(found.launcher_file) as f:
    assert found.launcher() == yaml.safe_load(f)  # what compile wrote beside it
  assert needs.read(runs.load_spec(path), path, "team-b").namespace == "team-b"


def test_one_worker_is_no_job_and_a_single_user_spec_runs_in_kubeflow(tmp_path):
  path = spec(tmp_path / "c", namespace=None)
  documents = runs.load_spec(path)
  found = needs.read(documents, path)
  assert (found.namespace, found.engine, found.kserve, found.profile()) == (
      "kubeflow", "", False, None)
  documents[0]["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]["custom_config"] = {
      "runtimeValue": {"constant": json.dumps({"workers": {"count": 1, "engine": "trainjob"}})}}
  assert needs.read(documents, path).engine == ""

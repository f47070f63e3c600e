"""components/kserve_deploy/kserve_deploy.py: the step after the Pusher points
the InferenceService at the serving dir's newest version (on s3://, moto's
server), on the stand-in API with KServe (tests/fakes/kserve.py); a run that
pushed nothing changes nothing; the pipeline has the step only with
--kserve, and the compiled pipeline never takes it from the cache."""

import dataclasses
import itertools
import os
import tempfile

import pytest
from tfx.types import standard_artifacts

import serving
from components import ui_artifacts
from components.kserve_deploy import kserve_deploy
from dataset import declaration
from serving import kserve
from tests.conftest import DIGITS_YAML, model_dir
from tests.fakes import kserve as fake
from tests.fakes import kserve_storage

TARGET = kserve.Target("digits", canary_percent=25, service_account="s3-reader")


def _run(serving_dir: str, target: kserve.Target = TARGET) -> str:
  """The step's executor; what its run-page output says."""
  executor = kserve_deploy.KServeDeploy.EXECUTOR_SPEC.executor_class()
  page = ui_artifacts.Markdown()
  page.uri = os.path.join(PAGE_DIR, f"page-{next(PAGES)}.md")
  executor.Do({"pushed_model": [standard_artifacts.PushedModel()]}, {"deployed": [page]},
              {"serving_dir": serving_dir, "target": kserve_deploy.target_json(target)})
  with open(page.uri) as f:
    return f.read()


PAGES = itertools.count()
PAGE_DIR = tempfile.mkdtemp(prefix="kserve-deploy-pages-")


def test_the_newest_version_is_deployed_a_canary_after_the_first(tmp_path, monkeypatch, s3):
  base = f"s3://models/{tmp_path.name}/serving"
  with fake.standin(str(tmp_path), "kubeflow") as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    kserve_storage.add_s3_account(store, "kubeflow", s3[0])
    assert _run(base) == f"kserve: nothing served yet in {base}; no InferenceService"
    assert store.list("serving.kserve.io/v1beta1", "kubeflow", "inferenceservices") == []
    first = os.path.basename(serving.push(model_dir(str(tmp_path / "m1")), base))
    assert _run(base) == (f"kserve: created InferenceService digits: serves version {first} "
                          "(100%, Knative mode)")
    assert fake.traffic(store, "kubeflow", "digits") == [(100, first)]
    second = os.path.basename(serving.push(model_dir(str(tmp_path / "m2")), base))
    assert _run(base).startswith(f"kserve: version {second} is a canary at 25% of traffic")
    assert fake.traffic(store, "kubeflow", "digits") == [(25, second), (75, first)]
    _run(base)  # a run that pushed nothing: the same spec, the same generation
    assert fake.reconciled(store, "kubeflow", "digits")["metadata"]["generation"] == 2


def test_a_predictor_without_the_s3_secret_fails_the_step(tmp_path, monkeypatch, s3):
  """The namespace's `default` account lists no Secret: KServe's storage
  initializer goes to AWS, the revision never gets Ready, the step fails."""
  base = f"s3://models/{tmp_path.name}/serving"
  with fake.standin(str(tmp_path), "kubeflow") as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    version = os.path.basename(serving.push(model_dir(str(tmp_path / "m1")), base))
    with pytest.raises(serving.ServingError, match=(
        rf"^kserve: version {version} of InferenceService digits did not get Ready .*"
        r"ModelLoadFailed: botocore.exceptions.EndpointConnectionError")):
      _run(base, dataclasses.replace(TARGET, service_account="", ready_seconds=30))


def test_the_step_is_there_only_with_kserve_and_never_cached_on_kubeflow():
  from kubeflow.compile.compiler import uncached_steps
  from tests.unit.pipeline.test_pipeline import _by_id, _config, build_pipeline
  config = _config(declaration.load(DIGITS_YAML))
  assert "KServeDeploy" not in _by_id(build_pipeline(config))
  assert "KServeDeploy" not in uncached_steps(config)
  with_step = dataclasses.replace(config, kserve=TARGET, serving_dir="s3://b/t/serving")
  node = _by_id(build_pipeline(with_step))["KServeDeploy"]
  assert node.exec_properties["target"] == kserve_deploy.target_json(TARGET)
  assert "KServeDeploy" in uncached_steps(with_step)

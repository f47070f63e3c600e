"""The stand-in launcher's downloads and uploads (tests/fakes/kfp_backend.py)
against kubeflow/pipelines `component/launcher_v2.go` and
`objectstore/object_store.go` at 2.5.0, 2.16.x and 2.17.0, and its root DAG
driver, which refuses a root it cannot parse before any step."""

import os

import pytest
import yaml

from tests.fakes.kfp_backend import Backend, StepFailed
from tests.fakes.s3_server import s3_server

TASK = "root/p/r/Trainer/u"  # <root prefix>/<pipeline>/<run>/<task>/<salt>
SECRETS = {"s3-creds": {"accesskey": "k", "secretkey": "s"}}


@pytest.fixture(scope="module")
def store():
  with s3_server(buckets=("pipelines",)) as (endpoint, client):
    yield endpoint, client


@pytest.fixture
def launcher(tmp_path, store):
  """A Backend of the given version after a run of no task on
  s3://pipelines/root (the session set as the driver sets it), and the
  bucket its launcher opens."""
  made = []
  spec = tmp_path / "spec.yaml"
  spec.write_text(yaml.safe_dump({"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}},
                                  "components": {}, "deploymentSpec": {"executors": {}}}))
  providers = yaml.safe_dump({"s3": {"default": {
      "endpoint": store[0][len("http://"):], "region": "us-east-1", "disableSSL": True,
      "credentials": {"fromEnv": False, "secretRef": {
          "secretName": "s3-creds", "accessKeyKey": "accesskey", "secretKeyKey": "secretkey"}}}}})

  def make(version):
    backend = Backend(str(tmp_path / f"home-{len(made)}"), None, secrets=SECRETS,
                      version=version, launcher_config={"providers": providers})
    made.append(backend)
    backend.run(str(spec), {}, run_id="r", pipeline_root="s3://pipelines/root")
    return backend, backend._open_bucket("Trainer", {})
  yield make
  for backend in made:
    backend.close()


def pod_files(pod) -> set:
  return {os.path.relpath(os.path.join(d, f), pod) for d, _, names in os.walk(pod)
          for f in names}


@pytest.mark.parametrize("version", [(2, 5), (2, 16, 1), (2, 17)])
def test_an_input_is_its_keys_and_before_217_its_siblings_too(launcher, store, tmp_path,
                                                               version):
  """DownloadBlob lists the input's key as a bare prefix: before 2.17 every
  key listed is copied relative to it, `model_run/...` beside `model`
  (object_store.go@2.5.0 lines 123-150); 2.17.0 keeps only the key's own
  (isBlobKeyUnderPrefix, lines 171-174 and 192)."""
  client = store[1]
  for key in ("model/a.txt", "model_run/b.txt"):
    client.put_object(Bucket="pipelines", Key=f"{TASK}/{key}", Body=b"x")
  backend, bucket = launcher(version)
  pod = tmp_path / "pod"
  backend._download(f"s3://pipelines/{TASK}/model", str(pod), "model", bucket)
  found = pod_files(pod)
  assert f"s3/pipelines/{TASK}/model/a.txt" in found, found
  assert (f"s3/pipelines/{TASK}/model_run/b.txt" in found) == (version < (2, 17)), found


def test_every_output_a_pod_holds_is_uploaded_and_one_outside_the_root_fails(
    launcher, store, tmp_path):
  """uploadOutputArtifacts uploads each output's local path when it exists,
  not the log alone, and first needs its URI under the run's root
  (KeyFromURI; launcher_v2.go@2.17.0 lines 811-836, @2.5.0 lines 557-573)."""
  backend, bucket = launcher((2, 17))
  pod = tmp_path / "pod"
  written = pod / "s3" / "pipelines" / TASK / "model" / "saved" / "x.txt"
  written.parent.mkdir(parents=True)
  written.write_text("weights")
  outputs = {key: {"artifacts": [{"uri": f"s3://pipelines/{TASK}/{key}"}]}
             for key in ("model", "model_run")}  # model_run: nothing in the pod
  backend._upload_outputs(outputs, {}, str(pod), bucket)
  body = store[1].get_object(Bucket="pipelines", Key=f"{TASK}/model/saved/x.txt")["Body"]
  assert body.read() == b"weights"
  elsewhere = {"model": {"artifacts": [{"uri": "s3://pipelines/elsewhere/model"}]}}
  with pytest.raises(StepFailed, match=r'^failed to upload output artifact "model": URI '
                     r'"s3://pipelines/elsewhere/model" does not have expected bucket prefix '
                     r'"s3://pipelines/root/p/r"$'):
    backend._upload_outputs(outputs, elsewhere, str(pod), bucket)


def test_a_root_the_driver_cannot_parse_fails_the_run_before_any_step(tmp_path):
  """config/env.go@2.17.0 line 119: ParseProviderFromPath, in the root DAG
  driver; a local folder is no root (objectstore/config.go lines 130-139)."""
  spec = tmp_path / "spec.yaml"
  spec.write_text(yaml.safe_dump({"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}},
                                  "components": {}, "deploymentSpec": {"executors": {}}}))
  backend = Backend(str(tmp_path / "home"), None)
  try:
    with pytest.raises(StepFailed, match=r"^driver\.RootDAG failed: parse bucket config "
                       r'failed: unrecognized pipeline root format: "/tmp/root"$'):
      backend.run(str(spec), {}, pipeline_root="/tmp/root")
  finally:
    backend.close()

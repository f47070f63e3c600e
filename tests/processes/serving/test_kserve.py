"""A version staged for KServe on s3:// (moto's S3 server, a process), as
kserve-storage downloads it: the staged URI, ending in "/", brings exactly
one numbered version; without its "/", S3's unanchored prefix would bring a
sibling version's copy too (tests/fakes/kserve.py `downloaded`)."""


from serving import kserve
from tests.conftest import model_dir
from tests.fakes import kserve as fake
from tests.fakes.s3_server import env as s3_env
from tests.fakes.s3_server import s3_server, upload_folder


def test_on_s3_the_staged_uri_downloads_one_version(tmp_path, monkeypatch):
  with s3_server(["models"]) as (endpoint, client), fake.standin(
      str(tmp_path), "team-a") as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    for k, v in s3_env(endpoint).items():
      monkeypatch.setenv(k, v)
    base = "s3://models/digits/serving"
    for version in ("17", "170"):  # 17 is a prefix of 170
      upload_folder(client, model_dir(str(tmp_path / version)), f"{base}/{version}")
    from runtime import storage
    storage.enable([base])
    assert kserve.KServe(kserve.Target("digits")).deploy(base, "17").startswith(
        "kserve: created InferenceService digits serving version 17")
    obj = fake.reconciled(store, "team-a", "digits")
    uri = obj["spec"]["predictor"]["model"]["storageUri"]
    assert uri == f"{base}/kserve/17/" and fake.downloaded(uri) == ["17/saved_model.pb"]
    assert [c["status"] for c in obj["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
    kserve.stage(base, "170")
    # Without its final "/", the prefix would also bring version 170's copy,
    # into a folder TF Serving takes for version 0.
    assert fake.downloaded(uri.rstrip("/")) == ["0/170/saved_model.pb", "17/saved_model.pb"]
    # The serving dir itself would bring every version, and no TF Serving
    # version folder in a URI naming one.
    assert not fake.serves(f"{base}/17/")



"""`python -m commands.serving rollback --kserve NAME` (serving/kserve_rollback.py),
run in this process through the CLI's `main`, with the serving dir on s3://
(moto's S3 server, a process: tests/processes/conftest.py), against the
stand-in API server with KServe v0.20.0's CRD, webhooks and Knative-mode
controller (tests/fakes/kserve.py):
- with a canary in flight, the copy is of the version rolled out, which
  KServe's traffic returns to: also behind a second canary, and on a second
  rollback in a row;
- `--to` another version, and a forbidden patch, refused in one line before
  the serving dir changes;
- a Standard-mode InferenceService rolled back in its own mode (the
  stand-in keeps no Deployments for it: what is checked is the spec and
  what the user reads)."""

import os

import pytest

import serving
from commands.serving import cli
from serving import history, kserve, kserve_modes
from tests.conftest import model_dir
from tests.fakes import kserve as fake
from tests.fakes import kserve_storage

NAMESPACE = "team-a"


@pytest.fixture
def cluster(tmp_path, monkeypatch, s3):
  with fake.standin(str(tmp_path), NAMESPACE) as (store, config):
    monkeypatch.setenv("KUBECONFIG", config)
    kserve_storage.add_s3_account(store, NAMESPACE, s3[0])  # the predictor's "s3-reader"
    yield store


def push(base: str, folder) -> str:
  return os.path.basename(serving.push(model_dir(str(folder)), base))


def deploy(store, base: str, version: str, **target) -> None:
  target = {"service_account": "s3-reader", **target}
  kserve.KServe(kserve.Target("digits", **target)).deploy(base, version)
  fake.reconciled(store, NAMESPACE, "digits")


def rollback(capsys, base: str, *flags) -> tuple:
  """(exit status, stdout lines, stderr) of `rollback --kserve digits`."""
  code = cli.main(["rollback", "--serving-dir", base, "--kserve", "digits", *flags])
  out, err = capsys.readouterr()
  return code, out.splitlines(), err.strip()


def versions(base: str) -> list:
  return [os.path.basename(p) for p in serving.versions(base)]


def spec(store) -> dict:
  return fake.reconciled(store, NAMESPACE, "digits")["spec"]["predictor"]


def canaries(tmp_path, store, count: int) -> tuple:
  """The serving dir, then version 1 rolled out and `count` more deployed
  one over the other as canaries at 10%."""
  base = f"s3://models/{tmp_path.name}/serving"
  names = [push(base, tmp_path / "m1")]
  deploy(store, base, names[0])
  for i in range(count):
    names.append(push(base, tmp_path / f"m{i + 2}"))
    deploy(store, base, names[-1], canary_percent=10)
  return (base, *names)


def test_a_rollback_behind_a_second_canary_copies_the_rolled_out_version(
    tmp_path, cluster, capsys):
  """V1 rolled out, V2 then V3 as canaries: KServe sends the traffic back to
  V1, so the copy (serving/kserve_rollback.py) is of V1, not of V2."""
  store = cluster
  base, first, second, third = canaries(tmp_path, store, 2)
  assert fake.traffic(store, NAMESPACE, "digits") == [(10, third), (90, first)]
  code, lines, err = rollback(capsys, base)
  assert code == 0, err
  copy = versions(base)[0]
  assert history.rolled_back(os.path.join(base, copy)) == {"to": first, "from": third}
  # The serving dir, the spec and the traffic agree: all on V1's model.
  assert kserve.served_version(fake.reconciled(store, NAMESPACE, "digits")) == copy
  assert fake.traffic(store, NAMESPACE, "digits") == [(0, copy), (100, first)]
  assert lines[-1] == (f"kserve: canary version {third} rolled back: all traffic returns at "
                       f"once to version {first}'s revision, rolled out before it; the spec "
                       f"names version {copy}, a copy of {first}, at 0%"), lines
  # The next canary splits with it.
  fourth = push(base, tmp_path / "m4")
  deploy(store, base, fourth, canary_percent=10)
  assert fake.traffic(store, NAMESPACE, "digits") == [(10, fourth), (90, first)]


def test_a_second_rollback_in_a_row_keeps_the_copy_of_the_rolled_out_version(
    tmp_path, cluster, capsys):
  """The first rollback leaves the copy of V1 newest, at 0%; the second
  (serving/kserve_rollback.py) pushes nothing, and all stays on V1."""
  store = cluster
  base, first, second = canaries(tmp_path, store, 1)
  assert rollback(capsys, base)[0] == 0
  copy = versions(base)[0]
  before, named = versions(base), spec(store)
  code, lines, err = rollback(capsys, base)
  assert code == 0, err
  assert versions(base) == before
  assert spec(store) == named and named["canaryTrafficPercent"] == 0
  assert fake.traffic(store, NAMESPACE, "digits") == [(0, copy), (100, first)]
  assert lines == [
      f"rolled back: nothing pushed: the newest, version {copy}, a copy of {first}, already "
      "is what the InferenceService is to name",
      f"kserve: InferenceService digits already names version {copy}, a copy of {first}, at "
      f"0%: all traffic is on version {first}'s revision, rolled out"], lines


def test_to_another_version_than_the_rolled_out_one_is_refused_before_the_push(
    tmp_path, cluster, capsys):
  """During a canary, `--to` may only name the rolled-out version: refused
  in one line (serving/kserve_rollback.py), the serving dir and spec as
  they were."""
  store = cluster
  base, first, second, third = canaries(tmp_path, store, 2)
  before, named = versions(base), spec(store)
  code, lines, err = rollback(capsys, base, "--to", second)
  assert (code, lines) == (2, [])
  assert err == (
      f"error: --to {second}: expected version {first}, the one InferenceService digits has "
      f"rolled out: with a canary in flight (version {third} at 10%) KServe sends all "
      f"traffic back to it; roll back without --to, or run `kserve promote` first, then "
      f"roll back --to {second}"), err
  assert versions(base) == before and spec(store) == named
  assert rollback(capsys, base, "--to", first)[0] == 0
  assert history.rolled_back(os.path.join(base, versions(base)[0]))["to"] == first


def test_a_forbidden_patch_is_refused_before_the_push(tmp_path, cluster, capsys):
  """The patch is sent as a dry run first (serving/kserve_rollback.py):
  a refusal leaves the serving dir as it was."""
  store = cluster
  base, first, second = canaries(tmp_path, store, 1)
  before, named = versions(base), spec(store)
  store.forbid("patch", "inferenceservices")
  code, _, err = rollback(capsys, base)
  assert code == 2 and len(err.splitlines()) == 1, err
  assert versions(base) == before and spec(store) == named
  assert err.startswith(f"error: patch inferenceservices.serving.kserve.io digits (roll back "
                        f"to {first}, a dry run): forbidden in namespace team-a"), err
  store.forbidden.clear()
  assert rollback(capsys, base)[0] == 0


def test_a_standard_mode_inference_service_rolls_back_in_its_own_mode(
    tmp_path, cluster, capsys):
  """Standard mode, recorded in the annotation (serving/kserve_rollback.py
  reads it): the copy of the version before the newest rolled out."""
  store, base = cluster, f"s3://models/{tmp_path.name}/serving"
  first = push(base, tmp_path / "m1")
  deploy(store, base, first, mode="standard")
  second = push(base, tmp_path / "m2")
  deploy(store, base, second, mode="standard")
  code, lines, err = rollback(capsys, base)
  assert code == 0, err
  copy = versions(base)[0]
  assert history.rolled_back(os.path.join(base, copy)) == {"to": first, "from": second}
  obj = fake.reconciled(store, NAMESPACE, "digits")
  assert kserve.served_version(obj) == copy
  assert "canaryTrafficPercent" not in obj["spec"]["predictor"]
  assert obj["metadata"]["annotations"][kserve_modes.MODE_ANNOTATION] == "Standard"
  assert lines[-1] == (f"kserve: InferenceService digits now serves version {copy}, a copy "
                       f"of {first}, rolled out (Standard mode)"), lines

"""`python -m commands.serving rollback`: a copy of an earlier version pushed as
the newest, and a version that is not there refused in one line. `request`:
the REST request a JSON client sends, for real digits records. `kserve`:
versions deployed, a canary promoted, a rollback pointing the
InferenceService back, on the stand-in API with KServe (tests/fakes/kserve.py):
the rollback as a process (s3:// and the cluster from its environment, and
its exit), the other steps through the CLI's `main` in this process."""

import json
import os
import subprocess
import sys

import serving
from commands.serving import cli
from dataset import declaration
from dataset.convert.rows import write_rows
from serving import history, latest, push, rest
from tests.conftest import DIGITS_YAML, REPO, digit_rows, model_dir
from tests.fakes import kserve as kserve_fake
from tests.fakes import kserve_storage
from tests.fakes.s3_server import env as s3_env


def _serving(*args, env=None):
  return subprocess.run([sys.executable, "-m", "commands.serving", *args], cwd=REPO,
                        capture_output=True, text=True, timeout=300,
                        env={**os.environ, **(env or {})})


def _main(capsys, *args) -> subprocess.CompletedProcess:
  """`main` in this process, its outcome as `_serving`'s: a process each costs
  a TensorFlow import, and the entry point is the same `main`."""
  code = cli.main(list(args))
  out, err = capsys.readouterr()
  return subprocess.CompletedProcess(args, code, out, err)


def test_rollback_pushes_a_copy_of_the_earlier_version_as_the_newest(tmp_path):
  base = tmp_path / "serving"
  judged = {"metric": "accuracy", "value": 0.95, "baseline_value": None,
            "judged_against": "none", "pipeline_run": "run-1", "pushed_unix": 1}
  good = push(model_dir(str(tmp_path / "good")), str(base),
              extra={serving.BLESSED: json.dumps(judged)})
  serving.record(good, ["train_span1"], "k-good")
  bad_model = model_dir(str(tmp_path / "bad"))
  serving.record(bad_model, ["train_span2"], "k-bad")
  bad = push(bad_model, str(base))
  before = sorted(os.listdir(base))

  proc = _serving("rollback", "--serving-dir", str(base))
  assert proc.returncode == 0, proc.stderr[-2000:]
  newest = latest(str(base))
  assert newest not in (good, bad) and int(os.path.basename(newest)) > int(
      os.path.basename(bad)), (newest, good, bad)
  assert f"is a copy of {os.path.basename(good)}" in proc.stdout, proc.stdout
  # Nothing deleted; the copy is the good model, and says what it replaced.
  assert set(before) <= set(os.listdir(base))
  assert serving.trained_on(newest) == ["train_span1"]
  assert history.rolled_back(newest) == {"to": os.path.basename(good),
                                         "from": os.path.basename(bad)}
  # The next run compares with the model actually served: the copy, even
  # when it trains on the bad model's data and settings again.
  assert serving.baseline_version(str(base), "k-bad") == os.path.basename(newest)

  listed = _serving("versions", "--serving-dir", str(base))
  assert listed.returncode == 0, listed.stderr[-2000:]
  lines = listed.stdout.strip().splitlines()
  assert len(lines) == 3 and lines[0].startswith(f"{os.path.basename(newest)}  served"), lines
  assert f"rollback: a copy of {os.path.basename(good)} (replacing " \
         f"{os.path.basename(bad)})" in lines[0], lines[0]
  assert "trained on train_span2" in lines[1], lines[1]
  # What blessed each version, from the version's own record: the copy
  # keeps the original's; a version pushed without one says so.
  assert "accuracy 0.9500" in lines[0] and "accuracy 0.9500" in lines[2], lines
  assert "blessing: not recorded" in lines[1], lines[1]


def test_rollback_to_a_version_that_is_not_there_is_one_line(tmp_path):
  base = tmp_path / "serving"
  push(model_dir(str(tmp_path / "only")), str(base))
  proc = _serving("rollback", "--serving-dir", str(base))
  assert proc.returncode == 2 and proc.stderr.strip().startswith(
      f"error: {base}: nothing to roll back to: one complete version"), proc.stderr
  proc = _serving("rollback", "--serving-dir", str(base), "--to", "12345")
  assert proc.returncode == 2 and "version 12345: expected one of" in proc.stderr, proc.stderr
  assert len([n for n in os.listdir(base) if n.isdigit()]) == 1


def test_request_prints_what_a_json_client_sends_for_the_first_records(tmp_path):
  write_rows(digit_rows(5), str(tmp_path), "eval")
  (path,) = [str(p) for p in tmp_path.glob("eval*")]
  proc = _serving("request", "--dataset", DIGITS_YAML, "--examples", path, "--count", "3")
  assert proc.returncode == 0, proc.stderr[-2000:]
  specs = rest.inputs(declaration.load(DIGITS_YAML))
  tensors = rest.decode(proc.stdout, specs)  # TF Serving's rules take it
  assert {k: v.shape[0] for k, v in tensors.items()} == {k: 3 for k in specs}, tensors
  assert tensors["image"][0].startswith(b"\x89PNG")

  proc = _serving("request", "--dataset", DIGITS_YAML, "--examples", str(tmp_path / "none"))
  assert (proc.returncode, proc.stderr.strip()) == (
      2, f"error: --examples: no file at {tmp_path / 'none'}"), proc.stderr


def test_kserve_deploy_a_canary_promote_and_a_rollback_back_to_the_earlier(
    tmp_path, s3, monkeypatch, capsys):
  base = f"s3://models/{tmp_path.name}/serving"
  with kserve_fake.standin(str(tmp_path), "team-a") as (store, config):
    first = os.path.basename(push(model_dir(str(tmp_path / "m1")), base))
    env = {"KUBECONFIG": config, **s3_env(s3[0])}
    monkeypatch.setenv("KUBECONFIG", config)  # `main` here; the s3 fixture set the rest
    flags = ("--serving-dir", base, "--name", "digits")
    kserve_storage.add_s3_account(store, "team-a", s3[0])
    proc = _main(capsys, "kserve", "deploy", *flags, "--canary-percent", "20",
                 "--service-account", "s3-reader")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == (f"kserve: created InferenceService digits: serves version "
                                   f"{first} (100%, Knative mode)")
    second = os.path.basename(push(model_dir(str(tmp_path / "m2")), base))
    proc = _main(capsys, "kserve", "deploy", *flags, "--canary-percent", "20")
    assert proc.stdout.startswith(f"kserve: version {second} is a canary at 20% of traffic; "
                                  f"version {first} keeps 80%"), proc.stdout + proc.stderr
    assert kserve_fake.traffic(store, "team-a", "digits") == [(20, second), (80, first)]
    proc = _main(capsys, "kserve", "status", *flags)
    assert " 20% to revision digits-predictor-00002 (latest)" in proc.stdout, proc.stdout
    assert "  80% to revision digits-predictor-00001 [prev]" in proc.stdout, proc.stdout
    # Rolled back: the serving dir's copy of the first, and its traffic back at once.
    proc = _serving("rollback", "--serving-dir", base, "--kserve", "digits", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    copy = os.path.basename(latest(base))
    assert copy not in (first, second)
    assert proc.stdout.splitlines()[-1].startswith(f"kserve: canary version {second} rolled "
                                                   "back"), proc.stdout
    assert kserve_fake.traffic(store, "team-a", "digits") == [(0, copy), (100, first)]
    proc = _main(capsys, "kserve", "promote", *flags)
    assert proc.stdout.strip() == f"kserve: version {copy} promoted to all traffic"
    assert kserve_fake.traffic(store, "team-a", "digits") == [(100, copy)]

    # No such InferenceService: refused before the serving dir changes.
    before = serving.versions(base)
    proc = _main(capsys, "rollback", "--serving-dir", base, "--kserve", "nope")
    assert (proc.returncode, proc.stderr.strip()) == (
        2, "error: no InferenceService nope in namespace team-a: deploy a version first")
    assert serving.versions(base) == before

    store.forbid("patch", "inferenceservices")
    third = os.path.basename(push(model_dir(str(tmp_path / "m3")), base))
    proc = _main(capsys, "kserve", "deploy", *flags)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: patch inferenceservices.serving.kserve.io digits "
                                  f"(serve {third}): forbidden in namespace team-a"), proc.stderr

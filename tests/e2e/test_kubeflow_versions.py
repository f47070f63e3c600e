"""The compiled steps on each backend version's feeding, and the run's root
as the backend resolves it.

tests/fakes/kfp_backend.py feeds a step as a given backend version does:
from 2.5 an output `executor-logs` of type `system.Artifact` that the
launcher writes the step's log into (on by default); from 2.15 outputs
named by their key and the executor output file under the task's own
folder; from 2.16.1 the log's URI suffixed with the retry index. The run's root is the run's own,
else the namespace's `kfp-launcher` ConfigMap's, else the in-cluster
default `minio://mlpipeline/v2/artifacts`: never the spec's. The launcher
reaches the s3:// store only through the ConfigMap's `providers`
(tests/fakes/kfp_launcher_providers.py, kfp_launcher_store.py): each run here applies the
`kfp-launcher.yaml` compile wrote, as docs/kubeflow.md says, but three,
whose first step fails after its program, uploading its log to AWS.

The digits spec on s3://, cut to its first steps (SpanWindow, our own
component, and ImportExampleGen, TFX's, both through the entrypoint), runs
here on what the whole pipeline's runs do not take: 2.17 without logs and
with the run's root from the namespace's ConfigMap; a run in the
in-cluster default root; compiled with `--retries 0`, a deleted pod
that 2.17's manifests retry all the same; a multi-user install's
profile namespace, on a store whose namespace keys reach only the profile
controller's prefixes (tests/fakes/s3_profiles.py), compiled as
docs/kubeflow.md says, and given a root outside them. The three without the
ConfigMap carry the exit step, as `submit --notify URL` adds it: on 2.17 with
Kubeflow's final status (`--final-status`), on 2.5 without it, and, asking
for it, refused by 2.5. The whole pipeline runs on 2.17 with logs, their
URIs suffixed with each attempt's index, in tests/e2e/test_kubeflow_steps.py,
and on 2.5 with logs (each published whole, its URI unsuffixed) in
tests/e2e/test_kubeflow_matrix.py; the digits' third run there has log
publishing off, and pushes.
"""

import json

import pytest
import yaml

from commands.kubeflow.cli import main as kubeflow
from kubeflow.compile import exit_handler
from kubeflow.compile.spec import tasks as spec_tasks
from tests.e2e.conftest import digits_in_bucket, kfp_launcher
from tests.e2e.test_kubeflow_steps import NOBODY, SECRETS, first_steps, webhook
from tests.fakes.kfp_backend import DEFAULT_ROOT, Backend, RunRefused, StepFailed
from tests.fakes.s3_profiles import BUCKET, profile_secret
from tests.fakes.s3_server import env, s3_server, upload_folder
from tests.unit.test_docs import commands

pytestmark = pytest.mark.e2e

# (version, logs published, where the run's root comes from)
FEEDINGS = {"2.17-no-logs-configmap-root": ((2, 17), False, "configmap")}
PATH_FLAGS = ("--pipeline-root", "--data-root", "--serving-dir")
TEAM_A_PREFIXES = ("s3://mlpipeline/artifacts/, s3://mlpipeline/private-artifacts/team-a/, "
                   "s3://mlpipeline/private/team-a/, s3://mlpipeline/shared/")

# The exit step's runs, in a namespace without the kfp-launcher ConfigMap:
# (version, whether the spec asks for Kubeflow's final status).
NOTICES = {"no-configmap": ((2, 17), True), "notice-2.5": ((2, 5), False),
           "refused-2.5": ((2, 5), True)}


def first_steps_noticed(spec: str, path, hook: str, kubeflow_state: bool) -> str:
  """The compiled spec with the exit step as `submit --notify URL` uploads
  it (with `kubeflow_state`, `--final-status` too), its exit handler's DAG
  cut to SpanWindow and ImportExampleGen."""
  with open(spec, encoding="utf-8") as f:
    documents = [d for d in yaml.safe_load_all(f) if d]
  exit_handler.add(documents, hook, kubeflow_state)
  inside = spec_tasks(documents[0])
  for name in set(inside) - {"SpanWindow", "ImportExampleGen"}:
    del inside[name]
  path.write_text(yaml.safe_dump_all(documents))
  return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  root = tmp_path_factory.mktemp("kfp_versions")
  refusals = root / "store-refusals.log"
  with s3_server(buckets=("pipelines", "data", "admin", BUCKET), profiles=("team-a",),
                 log=str(refusals)) as (endpoint, client), \
       webhook() as (hook, messages):
    raw = digits_in_bucket(root, client)
    (root / "digits.yaml").write_text(yaml.safe_dump(raw))

    def compiled(name: str, *extra) -> str:
      assert kubeflow([
          "compile", "--dataset", str(root / "digits.yaml"),
          "--image", "local/tfrecord-pipeline:test", "--pipeline-root", "s3://pipelines/root",
          "--data-root", "s3://data/digits", "--skip-data-check",
          "--output-dir", str(root / name),
          *[a for k, v in env(endpoint).items() if not k.startswith("AWS_")
            for a in ("--env", f"{k}={v}")], "--env", "AWS_REGION=us-east-1",
          "--secret-env", "s3-creds:accesskey=AWS_ACCESS_KEY_ID",
          "--secret-env", "s3-creds:secretkey=AWS_SECRET_ACCESS_KEY", *extra]) == 0
      return first_steps(str(root / name / "pipeline.yaml"), root / f"{name}-first.yaml")
    spec = compiled("compiled")
    found = {}
    for name, (version, logs, source) in FEEDINGS.items():
      # The ConfigMap compile wrote, its root edited to another bucket's.
      backend = Backend(str(root / f"backend-{name}"), client, secrets=SECRETS, user=NOBODY,
                        version=version, publish_logs=logs,
                        launcher_config=kfp_launcher(root / "compiled",
                                                     defaultPipelineRoot="s3://admin/kfp"))
      try:
        found[name] = backend.run(spec, {}, log_dir=str(root / f"logs-{name}"),
                                  run_id=f"run-{name}", pipeline_root=(
                                      "s3://pipelines/root" if source == "run" else None))
      except StepFailed as e:
        found[name] = e
      finally:
        backend.close()
    # Compiled with --retries 0 (no retryPolicy) on 2.17's manifests:
    # ImportExampleGen's first pod is deleted (Error) as soon as it starts.
    no_retries = compiled("no-retries", "--retries", "0")
    backend = Backend(str(root / "backend-no-retries"), client, secrets=SECRETS,
                      kills={"ImportExampleGen": lambda _: True},
                      launcher_config=kfp_launcher(root / "no-retries"))
    try:
      found["no-retries"] = backend.run(no_retries, {},
                                        log_dir=str(root / "logs-no-retries"),
                                        run_id="run-no-retries",
                                        pipeline_root="s3://pipelines/root")
    except StepFailed as e:
      found["no-retries"] = e
    finally:
      backend.close()
    # A run that names no root, in a namespace without the ConfigMap.
    backend = Backend(str(root / "backend-minio"), client, secrets=SECRETS)
    try:
      backend.run(spec, {}, log_dir=str(root / "logs-minio"), run_id="run-minio")
      found["minio"] = None
    except StepFailed as e:
      found["minio"] = e
      found["minio-attempts"] = e.run.attempts
    finally:
      backend.close()
    found.update(_team_a_runs(root, endpoint, client, refusals))
    for name, (version, kubeflow_state) in NOTICES.items():
      # The run's own root, as submit sends it, in a namespace without the
      # ConfigMap: the launcher has no way to the store but AWS's defaults,
      # and cannot upload SpanWindow's log after its program recorded COMPLETE.
      backend = Backend(str(root / f"backend-{name}"), client, secrets=SECRETS, user=NOBODY,
                        version=version)
      posted = len(messages)
      try:
        backend.run(first_steps_noticed(str(root / "compiled" / "pipeline.yaml"),
                                        root / f"{name}.yaml", hook, kubeflow_state), {},
                    log_dir=str(root / f"logs-{name}"), run_id=f"run-{name}",
                    pipeline_root="s3://pipelines/root")
        found[name] = None
      except StepFailed as e:
        found[name] = e
      finally:
        backend.close()
      found[f"{name}-messages"] = messages[posted:]
    objects = {f"{bucket}/{o['Key']}" for bucket in ("pipelines", "admin", BUCKET)
               for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
               for o in page.get("Contents", [])}
    logs = {path: client.get_object(Bucket=path.split("/", 1)[0], Key=path.split("/", 1)[1])
            ["Body"].read().decode() for path in objects if "executor-logs" in path}
    yield {"runs": found, "objects": objects, "logs": logs, "root": root,
           "team-a-paths": docs_multi_user_paths()[0]}


def docs_multi_user_paths():
  """The paths of the compile command docs/kubeflow.md shows for a
  multi-user namespace (`--namespace`), and its other flags as shown, but
  the store's address (the stand-in's here) and what names this machine's
  files (--dataset, --image, --output-dir)."""
  (shown,) = [tokens for _, tokens, whole in commands("docs/kubeflow.md")
              if whole and "compile" in tokens and "--namespace" in tokens]
  flags = shown[shown.index("compile") + 1:]
  pairs = [(f, v) for f, v in zip(flags[::2], flags[1::2])
           if f not in ("--dataset", "--image", "--output-dir") and not v.startswith("S3_ENDPOINT=")]
  return {f: v for f, v in pairs if f in PATH_FLAGS}, [x for pair in pairs for x in pair]


def _team_a_runs(root, endpoint, client, refusals) -> dict:
  """The docs' multi-user set-up on the stand-in store as 2.17.0's profile
  controller leaves it (tests/fakes/s3_profiles.py): the digits copied to
  the docs' data root, compiled with the docs' flags, team-a's own keys in
  its Secret and the compiled kfp-launcher.yaml applied in team-a; its first
  steps run with the docs' root, as submit sends it, then with the
  single-user docs' root, as `submit --pipeline-root` could."""
  paths, flags = docs_multi_user_paths()
  upload_folder(client, str(root / "local"), paths["--data-root"])
  assert kubeflow(["compile", "--dataset", str(root / "digits.yaml"),
                   "--image", "local/tfrecord-pipeline:test", "--skip-data-check",
                   "--output-dir", str(root / "team-a"), "--env", f"S3_ENDPOINT={endpoint}",
                   *flags]) == 0
  spec = first_steps(str(root / "team-a" / "pipeline.yaml"), root / "team-a-first.yaml")
  backend = Backend(str(root / "backend-team-a"), client, secrets=profile_secret("team-a"),
                    namespace="team-a", launcher_config=kfp_launcher(root / "team-a"),
                    user=NOBODY)
  found = {}
  try:
    for name, run_root in (("team-a", paths["--pipeline-root"]),
                           ("team-a-outside", "s3://mlpipeline/tfx")):
      try:
        found[name] = backend.run(spec, {}, log_dir=str(root / f"logs-{name}"),
                                  run_id=f"run-{name}", pipeline_root=run_root)
      except StepFailed as e:
        found[name] = e
      if name == "team-a":  # what the store refused team-a's keys in the run
        found["team-a-refused"] = [line for line in refusals.read_text().splitlines()
                                   if line.startswith("denied team-a")]
  finally:
    backend.close()
  return found


@pytest.mark.parametrize("feeding", sorted(FEEDINGS))
def test_the_first_steps_run_on_each_feeding(runs, feeding):
  run = runs["runs"][feeding]
  assert not isinstance(run, StepFailed), f"{feeding}: {run}"
  assert run.states == {"SpanWindow": "EXECUTED", "ImportExampleGen": "EXECUTED"}, run.states
  examples = run.outputs[("ImportExampleGen", "examples")]
  assert sorted(json.loads(examples["metadata"]["split_names"])) == [
      "eval_span1", "train_span1"], examples["metadata"]
  root = "admin/kfp" if FEEDINGS[feeding][2] == "configmap" else "pipelines/root"
  assert examples["uri"].startswith(f"s3://{root}/digits/run-{feeding}/ImportExampleGen/")


def test_no_log_is_published_where_the_install_turned_it_off(runs):
  # PUBLISH_LOGS "false": no `executor-logs` object, though the steps ran.
  # Published logs, whole, where each version puts them:
  # tests/e2e/test_kubeflow_matrix.py (2.5), test_kubeflow_steps.py (2.17).
  feeding = "2.17-no-logs-configmap-root"
  assert not FEEDINGS[feeding][1] and runs["runs"][feeding].states, runs["runs"][feeding]
  assert not [k for k in runs["logs"] if f"/run-{feeding}/" in k], sorted(runs["logs"])


def test_the_records_go_where_the_run_wrote(runs):
  for feeding, (_, _, source) in FEEDINGS.items():
    root = "admin/kfp" if source == "configmap" else "pipelines/root"
    assert f"{root}/digits/run-{feeding}/status/ImportExampleGen.json" in runs["objects"], \
        sorted(k for k in runs["objects"] if "status" in k)


def test_a_run_in_the_in_cluster_default_root_stops_at_its_first_step_naming_the_fix(runs):
  failed = runs["runs"]["minio"]
  assert isinstance(failed, StepFailed), "a minio:// root should have stopped the run"
  text = str(failed)
  assert text.startswith("step SpanWindow exited 1"), text[:300]
  (line,) = [x for x in text.splitlines() if x.startswith("error: ")]
  assert DEFAULT_ROOT in line and "kfp-launcher" in line and "defaultPipelineRoot" in line \
      and "python -m commands.kubeflow submit" in line, line
  assert "Traceback" not in text, text[-3000:]
  # 2.17's manifests retry Errors only (Argo's OnError): a step that exits 1
  # is Failed, and not started again.
  assert runs["runs"]["minio-attempts"] == {"SpanWindow": 1}, runs["runs"]["minio-attempts"]


def test_without_the_launchers_configmap_the_first_step_fails_after_its_program(runs):
  """No `providers`: the launcher opens s3:// with AWS's defaults
  (kubeflow/pipelines `config/s3.go`@2.17.0 lines 87-96,
  `objectstore/object_store.go` lines 91-105), and the step's log, the
  first thing it uploads, fails in its words (`component/launcher_v2.go`
  @2.17.0 line 834), though the step's program wrote its outputs and its
  record; the run stops there."""
  failed = runs["runs"]["no-configmap"]
  assert isinstance(failed, StepFailed), "the launcher reached the store without its ConfigMap"
  text = str(failed)
  assert text.startswith('failed to upload output artifact "executor-logs" to remote storage '
                         'URI "s3://pipelines/root/digits/run-no-configmap/SpanWindow/'), text
  assert "amazonaws.com" in text, text
  assert (failed.run.states["SpanWindow"], failed.run.states["ImportExampleGen"]) == (
      "FAILED", "SKIPPED"), failed.run.states
  assert "pipelines/root/digits/run-no-configmap/status/SpanWindow.json" in runs["objects"]
  # A launcher that exits non-zero leaves a Failed node: 2.17's OnError
  # policy does not start it again.
  assert failed.run.attempts["SpanWindow"] == 1, failed.run.attempts


def test_compile_wrote_the_configmap_the_runs_above_applied(runs):
  config = yaml.safe_load((runs["root"] / "compiled" / "kfp-launcher.yaml").read_text())
  assert config["data"]["defaultPipelineRoot"] == "s3://pipelines/root"
  default = yaml.safe_load(config["data"]["providers"])["s3"]["default"]
  assert default["forcePathStyle"] is True and default["disableSSL"] is True
  assert default["credentials"] == {"fromEnv": False, "secretRef": {
      "secretName": "s3-creds", "accessKeyKey": "accesskey", "secretKeyKey": "secretkey"}}


def test_a_step_compiled_without_retries_is_retried_on_217_when_its_pod_is_deleted(runs):
  """`--retries 0` writes no retryPolicy, so 2.17's manifests' templateDefaults
  apply whole (limit 2, OnError): the deleted pod is started again."""
  run = runs["runs"]["no-retries"]
  assert not isinstance(run, StepFailed), f"expected a retry to finish it, found: {run}"
  assert run.attempts == {"SpanWindow": 1, "ImportExampleGen": 2}, run.attempts
  assert run.states == {"SpanWindow": "EXECUTED", "ImportExampleGen": "EXECUTED"}, run.states


def test_a_profile_namespace_runs_its_first_steps_with_the_docs_multi_user_set_up(runs):
  """docs/kubeflow.md's multi-user compile command, team-a's own keys and
  its applied kfp-launcher.yaml: SpanWindow and ImportExampleGen run, the
  launcher's log uploads included, under team-a's prefixes, and the store
  refused none of their requests (the profile controller's policy at
  2.17.0, tests/fakes/s3_profiles.py)."""
  paths = runs["team-a-paths"]
  outside = {f: p for f, p in paths.items() if not p.startswith("s3://mlpipeline/private/team-a/")}
  assert "--pipeline-root" in paths and not outside, \
      f"expected the docs' paths under s3://mlpipeline/private/team-a/, found {paths}"
  run = runs["runs"]["team-a"]
  assert not isinstance(run, StepFailed), f"team-a: {run}"
  assert run.states == {"SpanWindow": "EXECUTED", "ImportExampleGen": "EXECUTED"}, run.states
  examples = run.outputs[("ImportExampleGen", "examples")]
  assert examples["uri"].startswith(f"{paths['--pipeline-root']}/digits/run-team-a/"
                                    f"ImportExampleGen/"), examples["uri"]
  assert [k for k in runs["logs"] if "/run-team-a/SpanWindow/" in k], \
      f"expected SpanWindow's log uploaded by the launcher, found {sorted(runs['logs'])}"
  assert runs["runs"]["team-a-refused"] == [], \
      f"expected no request of team-a's refused, found {runs['runs']['team-a-refused']}"


def test_a_root_outside_the_profiles_prefixes_stops_the_first_step_in_one_line(runs):
  """The single-user docs' root given to a run in team-a: the first step
  names the prefixes the namespace's keys reach, before it writes, rather
  than meeting AccessDenied halfway."""
  failed = runs["runs"]["team-a-outside"]
  assert isinstance(failed, StepFailed), "expected s3://mlpipeline/tfx refused in team-a"
  text = str(failed)
  assert text.startswith("step SpanWindow exited 1"), text[:300]
  (line,) = [x for x in text.splitlines() if x.startswith("error: ")]
  assert line.startswith("error: the run's pipeline root: this step's output ") and \
      " s3://mlpipeline/tfx/digits/run-team-a-outside/SpanWindow/" in line, line
  assert f"reach only {TEAM_A_PREFIXES}; " in line, line
  assert "Traceback" not in text, text[-3000:]
  assert failed.run.states == {"SpanWindow": "FAILED", "ImportExampleGen": "SKIPPED"}, \
      failed.run.states
  assert not [o for o in runs["objects"] if o.startswith("mlpipeline/tfx/")], \
      "expected nothing written under s3://mlpipeline/tfx"


def _fields(message: dict) -> dict:
  (attachment,) = message["attachments"]
  return {f["title"]: f["value"] for f in attachment["fields"]}


def test_a_run_whose_launcher_failed_after_the_program_is_notified_failed_by_kubeflow(runs):
  """Issue 68: SpanWindow's program recorded COMPLETE, then its launcher
  failed to upload the step's log (kubeflow/pipelines
  `component/launcher_v2.go`@2.17.0 line 834). Kubeflow's final status,
  the exit handler DAG's state in ML Metadata (`driver/resolve.go`@2.17.0
  lines 458-493), says FAILED; the steps' records alone said SUCCEEDED.
  The launcher's words reach no exit step (the status's `error` is left
  empty, line 475): the notice says where they are."""
  failed = runs["runs"]["no-configmap"]
  assert isinstance(failed, StepFailed) and str(failed).startswith(
      'failed to upload output artifact "executor-logs"'), failed
  assert failed.run.states["SpanWindow"] == "FAILED", failed.run.states
  (message,) = runs["runs"]["no-configmap-messages"]
  fields = _fields(message)
  assert fields["state"] == "FAILED" and fields["failed step"] == "not recorded", fields
  assert fields["state from"] == "Kubeflow (the exit handler's final status)", fields
  assert message["text"].startswith(
      "digits: run run-no-configmap FAILED; Kubeflow failed a step whose program recorded no "
      "failure: its launcher failed after the program ended (uploading an output or the "
      "step's log"), message["text"]
  assert "(the last step to start: SpanWindow)" in message["text"] \
      and message["text"].endswith("says why; nothing pushed"), message["text"]


def test_on_2_5_the_default_spec_runs_and_says_its_state_is_the_records(runs):
  """Compiled without --final-status, the spec runs on 2.5; its notice
  cannot see the launcher's failure, and says where its state came from."""
  failed = runs["runs"]["notice-2.5"]
  assert isinstance(failed, StepFailed) and "failed to upload output artifact" in str(failed), \
      failed
  # It ran and posted; then its own log's upload failed as SpanWindow's did.
  assert failed.run.states["notify"] == "FAILED", failed.run.states
  (message,) = runs["runs"]["notice-2.5-messages"]
  fields = _fields(message)
  assert fields["state"] == "SUCCEEDED", fields  # the records' view, as docs/kubeflow.md says
  assert fields["state from"].startswith(
      "the steps' records alone: Kubeflow gave this exit step no final status"), fields


def test_on_2_5_a_spec_asking_for_the_final_status_starts_no_run(runs):
  """`argocompiler/dag.go`@2.5.0 lines 629-630: the API server refuses to
  create the run; no step ran, nothing was posted."""
  refused = runs["runs"]["refused-2.5"]
  assert isinstance(refused, RunRefused), refused
  assert "failed to add implicit deps: task final status not supported yet" in str(refused)
  assert runs["runs"]["refused-2.5-messages"] == []

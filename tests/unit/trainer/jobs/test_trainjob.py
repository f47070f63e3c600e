"""trainer/jobs/trainjob.py and trainer/jobs/tfjob.py: the objects each engine is
sent, checked against each Kubeflow Trainer release's CRD, v2.0.0 to v2.3.0
(the stand-in's strict validation, tests/fakes/crd_schemas.py), and the
TrainJob sent in the form of placement the cluster's release takes."""

import pytest

from tests.conftest import REPO
from tests.fakes import kubernetes_api
from trainer.jobs import roles, tfjob, trainjob
from trainer.jobs.job import Job

COMMAND = ["python", "-m", "trainer.worker", "s3://b/root/Trainer/model_run/7/job/inputs.json"]
POD = {"image": "registry.example/pipeline:1", "env": {"S3_ENDPOINT": "http://minio:9000"},
       "secretEnv": [["s3-creds", "accesskey", "AWS_ACCESS_KEY_ID"]],
       "resources": {"cpu": 4, "memory_gb": 16, "gpus": 1, "gpu_type": "nvidia.com/gpu"}}
OWNER = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "name": "run-1",
         "uid": "u-1", "blockOwnerDeletion": False}


def test_a_trainjob_names_the_runtime_and_gives_each_node_the_trainers_pod():
  body = trainjob.body(Job("train-abc", COMMAND, 2, POD), "kubeflow", OWNER)
  spec = body["spec"]
  assert spec["runtimeRef"] == {"name": trainjob.RUNTIME, "apiGroup": trainjob.group,
                                "kind": "TrainingRuntime"}
  trainer = spec["trainer"]
  assert trainer["numNodes"] == 2 and trainer["command"] == COMMAND
  assert trainer["resourcesPerNode"] == {
      "requests": {"cpu": "4", "memory": "16G", "nvidia.com/gpu": "1"},
      "limits": {"cpu": "4", "memory": "16G", "nvidia.com/gpu": "1"}}
  env = {e["name"]: e.get("value", e.get("valueFrom")) for e in trainer["env"]}
  assert env[roles.JOB_ENV] == "train-abc" and env[roles.WORKERS_ENV] == "2"
  assert env["AWS_ACCESS_KEY_ID"] == {"secretKeyRef": {"name": "s3-creds", "key": "accesskey"}}
  assert body["metadata"]["ownerReferences"] == [OWNER]
  assert "runtimePatches" not in spec  # nothing to place: any Trainer from 2.0 takes it


# Each Trainer release's form of the workers' placement (trainer/jobs/trainjob.py).
FORM_OF = {"2.0": "podSpecOverrides", "2.1": "podTemplateOverrides", "2.2": "runtimePatches",
           "2.3": "runtimePatches"}
PLACING = {**POD, "nodeSelector": {"pool": "gpu"}, "serviceAccountName": "default-editor",
           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                            "effect": "NoSchedule"}]}


@pytest.mark.parametrize("version", sorted(FORM_OF))
def test_each_releases_form_passes_its_crd_and_the_newer_forms_are_refused_by_name(version):
  """Issue 70: Kubeflow's platform (manifests v1.11.0) ships Trainer 2.1,
  which refused the runtime patch every placed TrainJob carried."""
  from tests.fakes import crd_schemas
  placed = trainjob.placement(PLACING)
  base = trainjob.body(Job("train-abc", COMMAND, 2, POD), "kubeflow", None)
  form = FORM_OF[version]
  body = trainjob.in_form(base, form, placed)
  assert crd_schemas.problems("trainjobs", version, body) == {"unknown": [], "invalid": []}
  # Each release knows one form and refuses the others by name (its CRD).
  for other in set(trainjob.FORMS) - {form}:
    assert other not in body["spec"]
    refused = crd_schemas.problems("trainjobs", version,
                                   trainjob.in_form(base, other, placed))["unknown"]
    assert refused == [f'unknown field "spec.{other}"'], (other, refused)
  assert "nodeSelector" not in base["spec"] and not set(trainjob.FORMS) & set(base["spec"])


def test_the_placement_goes_to_the_runtimes_node_job_in_each_form():
  placed = trainjob.placement({**PLACING, "imagePullSecrets": ["regcred"]})
  assert placed == {"nodeSelector": {"pool": "gpu"}, "tolerations": PLACING["tolerations"],
                    "serviceAccountName": "default-editor",
                    "imagePullSecrets": [{"name": "regcred"}]}
  (patch,) = trainjob.placed_in("runtimePatches", placed)
  (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
  assert node == {"name": "node", "template": {"spec": {"template": {"spec": placed}}}}
  assert trainjob.placed_in("podTemplateOverrides", placed) == [
      {"targetJobs": [{"name": "node"}], "spec": placed}]
  without_secrets = {k: v for k, v in placed.items() if k != "imagePullSecrets"}
  assert trainjob.placed_in("podSpecOverrides", without_secrets) == [
      {"targetJobs": [{"name": "node"}], **without_secrets}]


def test_a_tfjob_runs_the_workers_in_a_container_named_tensorflow():
  body = tfjob.body(Job("train-abc", COMMAND, 3, {**POD, "nodeSelector": {"pool": "gpu"}}),
                    "kubeflow", OWNER)
  workers = body["spec"]["tfReplicaSpecs"]["Worker"]
  assert workers["replicas"] == 3 and workers["restartPolicy"] == "OnFailure"
  (container,) = workers["template"]["spec"]["containers"]
  assert container["name"] == "tensorflow"  # the only container the operator gives TF_CONFIG
  assert container["command"] == COMMAND
  assert workers["template"]["spec"]["nodeSelector"] == {"pool": "gpu"}
  assert body["spec"]["runPolicy"]["backoffLimit"] == tfjob.backoff_limit(3) == 10
  assert workers["template"]["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}


@pytest.mark.parametrize("conditions,state", [
    ([], "running"),
    ([{"type": "Complete", "status": "True"}], "succeeded"),
    ([{"type": "Failed", "status": "True", "reason": "ReachedMaxRestarts", "message": "m"}],
     "failed"),
    ([{"type": "Suspended", "status": "True"}], "running"),
])
def test_trainjob_conditions(conditions, state):
  assert trainjob.verdict({"status": {"conditions": conditions}})[0] == state


@pytest.mark.parametrize("conditions,state", [
    ([{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}], "running"),
    ([{"type": "Running", "status": "True"}, {"type": "Restarting", "status": "True"}],
     "running"),
    ([{"type": "Running", "status": "False"}, {"type": "Succeeded", "status": "True"}],
     "succeeded"),
    ([{"type": "Running", "status": "False"}, {"type": "Failed", "status": "True"}], "failed"),
])
def test_tfjob_conditions(conditions, state):
  assert tfjob.verdict({"status": {"conditions": conditions}})[0] == state


PLACED = {**POD, "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                           "effect": "NoSchedule"}]}


@pytest.fixture
def trainer_api(tmp_path, monkeypatch):
  """The stand-in API server serving TrainJobs (Trainer 2.2, the shipped
  runtime installed) and TFJobs, and a kubeconfig for the launcher's own
  client."""
  store = kubernetes_api.Store({"trainjobs", "tfjobs"}, trainer_version="2.2")
  install_runtime(store, "kubeflow")
  server = kubernetes_api.serve(store)
  (tmp_path / "kubeconfig").write_text(kubernetes_api.kubeconfig(server, "kubeflow"))
  monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
  yield store
  server.shutdown()


def install_runtime(store, namespace: str) -> None:
  """The shipped TrainingRuntime, as `kubectl apply` leaves it: the
  Trainer's webhook refuses a TrainJob whose runtime does not exist."""
  (runtime,) = _manifests("trainingruntime.yaml")
  store.create(("trainer.kubeflow.org/v1alpha1", namespace, "trainingruntimes",
                runtime["metadata"]["name"]), runtime)


def test_a_placed_trainjob_passes_the_trainer_webhook(trainer_api):
  """Issue 53: `manager: tfrecord-pipeline` was refused by Trainer 2.2's
  webhook, so every TrainJob with a node selector or toleration failed."""
  from trainer.jobs import kube
  body = trainjob.body(Job("train-abc", COMMAND, 2, PLACED), "kubeflow", None)
  created = kube.create(kube.Cluster(), trainjob.group, trainjob.version, trainjob.plural, body)
  assert created["spec"]["runtimePatches"][0]["manager"] == trainjob.MANAGER
  assert trainer_api.created["trainjobs"] == ["train-abc"]


TRIES = {"2.0": ["runtimePatches", "podTemplateOverrides", "podSpecOverrides"],
         "2.1": ["runtimePatches", "podTemplateOverrides"], "2.2": ["runtimePatches"],
         "2.3": ["runtimePatches"]}


@pytest.fixture
def tries(monkeypatch):
  """The placement form of every TrainJob the launcher sends, in order."""
  from trainer.jobs import kube
  sent, create = [], kube.create

  def recorded(cluster, group, version, plural, body):
    sent.append(next((f for f in trainjob.FORMS if f in body["spec"]), None))
    return create(cluster, group, version, plural, body)
  monkeypatch.setattr(kube, "create", recorded)
  return sent


@pytest.mark.parametrize("version", sorted(FORM_OF))
def test_the_launcher_asks_in_the_newest_form_then_once_in_each_older_one(
    trainer_api, tries, caplog, version):
  """Issue 70: on Trainer 2.1 (Kubeflow's platform) `--train-workers 2
  --node-selector ... --toleration ...` was refused, `unknown field
  "spec.runtimePatches"`. A profile's user cannot read the CRD to ask the
  version first; the refusal names it."""
  import logging

  from trainer.jobs import kube
  trainer_api.trainer_version = version
  job = Job("train-abc", COMMAND, 2, PLACING)
  with caplog.at_level(logging.INFO, logger="absl"):
    created = trainjob.create(kube.Cluster(), job, trainjob.body(job, "kubeflow", None))
  form = FORM_OF[version]
  assert tries == TRIES[version], tries
  assert created["spec"][form] == trainjob.placed_in(form, trainjob.placement(PLACING))
  assert trainer_api.created["trainjobs"] == ["train-abc"]
  said = [r.getMessage() for r in caplog.records if "went in spec." in r.getMessage()]
  assert said == [f"training job train-abc: the workers' nodeSelector, tolerations, "
                  f"serviceAccountName went in spec.{form} (Kubeflow Trainer "
                  f"{trainjob.FORMS[form]})"], said


def test_with_nothing_to_place_one_trainjob_is_sent_without_a_form(trainer_api, tries):
  from trainer.jobs import kube
  trainer_api.trainer_version = "2.0"
  job = Job("train-abc", COMMAND, 2, POD)
  trainjob.create(kube.Cluster(), job, trainjob.body(job, "kubeflow", None))
  assert tries == [None] and trainer_api.created["trainjobs"] == ["train-abc"]


def test_another_refusal_is_not_retried(trainer_api, tries):
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  trainer_api.trainer_version = "2.1"
  trainer_api.forbid("create", "trainjobs")
  job = Job("train-abc", COMMAND, 2, PLACING)
  with pytest.raises(ClusterError, match="forbidden in namespace kubeflow"):
    trainjob.create(kube.Cluster(), job, trainjob.body(job, "kubeflow", None))
  assert tries == ["runtimePatches"]


def test_trainer_2_0_cannot_take_pull_secrets_and_says_so_in_one_line(trainer_api, tries):
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  trainer_api.trainer_version = "2.0"
  job = Job("train-abc", COMMAND, 2, {**PLACING, "imagePullSecrets": ["regcred"]})
  with pytest.raises(ClusterError) as refused:
    trainjob.create(kube.Cluster(), job, trainjob.body(job, "kubeflow", None))
  assert str(refused.value) == (
      "expected a Kubeflow Trainer that takes a TrainJob's image pull secrets (2.1 and "
      "later), found 2.0, whose podSpecOverrides has none: regcred cannot reach the workers; "
      "ask the cluster admin to upgrade the Trainer or to add them to the runtime "
      "tfrecord-pipeline-tensorflow")
  assert tries == ["runtimePatches", "podTemplateOverrides"]
  assert "trainjobs" not in trainer_api.created


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_an_override_of_a_job_the_runtime_lacks_is_refused_by_the_webhook(trainer_api,
                                                                          version):
  """The stand-in's TrainJob webhook at 2.0 and 2.1 (tests/fakes/admission.py)."""
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  trainer_api.trainer_version = version
  form = FORM_OF[version]
  body = trainjob.in_form(trainjob.body(Job("train-abc", COMMAND, 2, POD), "kubeflow", None),
                          form, {"nodeSelector": {"pool": "gpu"}})
  body["spec"][form][0]["targetJobs"] = [{"name": "trainer"}]
  with pytest.raises(ClusterError) as refused:
    kube.create(kube.Cluster(), trainjob.group, trainjob.version, trainjob.plural, body)
  assert (f"denied the request: spec.{form}: Invalid value: []v1alpha1.") in str(refused.value)
  assert ("must not have targetJob that doesn't exist in the runtime job template"
          in str(refused.value)), str(refused.value)


@pytest.mark.parametrize("manager,message", [
    ("tfrecord-pipeline", 'spec.runtimePatches.manager: Invalid value: "tfrecord-pipeline": '
                          'must be a domain-prefixed path (such as "acme.io/foo")'),
    ("", "spec.runtimePatches.manager: Required value")])
def test_a_runtime_patch_without_a_domain_prefixed_manager_is_refused_in_one_line(
    trainer_api, manager, message):
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  body = trainjob.body(Job("train-abc", COMMAND, 2, PLACED), "kubeflow", None)
  body["spec"]["runtimePatches"][0]["manager"] = manager
  with pytest.raises(ClusterError) as refused:
    kube.create(kube.Cluster(), trainjob.group, trainjob.version, trainjob.plural, body)
  assert str(refused.value) == (
      f"create trainjobs.trainer.kubeflow.org train-abc: refused by the cluster (admission "
      f'webhook "validator.trainjob.trainer.kubeflow.org" denied the request: {message})')
  assert "trainjobs" not in trainer_api.created


def test_the_shipped_runtime_keeps_istio_sidecars_off_the_workers():
  """On a multi-user install the step's namespace injects Istio sidecars; a
  worker pod whose sidecar never exits never completes."""
  import os

  import yaml
  path = os.path.join(REPO, trainjob.RUNTIME_MANIFEST)
  with open(path) as f:
    runtime = yaml.safe_load(f)
  (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
  pod = node["template"]["spec"]["template"]
  assert pod["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}


def test_a_suspended_job_is_said_once_with_its_reason(caplog):
  """A TrainJob or TFJob that Kueue holds shows Suspended; the step says so
  once per change (trainer/jobs/watch.py _wait keeps waiting meanwhile)."""
  import logging

  from trainer.jobs import watch
  held = {"spec": {"suspend": True}}
  queued = {"spec": {"suspend": True}, "status": {"conditions": [
      {"type": "Suspended", "status": "True", "reason": "Suspended",
       "message": "TrainJob is suspended by the queue"}]}}
  admitted = {"spec": {}, "status": {"conditions": [
      {"type": "Suspended", "status": "False", "reason": "Resumed"}]}}
  seen = watch.Held("train-held")
  with caplog.at_level(logging.INFO, logger="absl"):
    for obj in (held, held, queued, queued, queued, admitted, admitted):
      seen.see(obj)
  said = [r.getMessage() for r in caplog.records if "train-held" in r.getMessage()]
  assert said == ["training job train-held: Suspended (spec.suspend is true); waiting for "
                  "it to be admitted",
                  "training job train-held: Suspended (Suspended: TrainJob is suspended by "
                  "the queue); waiting for it to be admitted",
                  "training job train-held: resumed"], said
  assert watch.suspended({"spec": {"runPolicy": {"suspend": True}}}) == "spec.suspend is true"


def _manifests(name: str):
  import os

  import yaml
  with open(os.path.join(REPO, "kubeflow", "manifests",
                         name)) as f:
    return [d for d in yaml.safe_load_all(f) if d]


@pytest.mark.parametrize("install", ["none", "trainer-rbac.yaml",
                                     "trainer-rbac-kubeflow-edit.yaml"])
def test_a_step_as_a_profiles_default_editor_creates_its_job_with_the_shipped_manifests(
    tmp_path, monkeypatch, install):
  """Issue 53: on a multi-user install steps run as `default-editor` in the
  user's profile namespace, which the shipped RoleBinding did not name.
  The stand-in API authorizes as Kubernetes' RBAC does (tests/fakes/rbac.py),
  over the profile's own binding to `kubeflow-edit`."""
  from tests.fakes import rbac
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  store = kubernetes_api.Store({"trainjobs", "trainingruntimes"}, trainer_version="2.2")
  store.rbac = True
  rbac.profile(store, "team-a")
  install_runtime(store, "team-a")
  if install != "none":
    rbac.apply(store, _manifests(install), "team-a")
  server = kubernetes_api.serve(store)
  try:
    (tmp_path / "kubeconfig").write_text(
        kubernetes_api.kubeconfig(server, "team-a", account="default-editor"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    body = trainjob.body(Job("train-abc", COMMAND, 2, PLACED), "team-a", None)
    cluster = kube.Cluster()
    if install == "none":
      with pytest.raises(ClusterError) as refused:
        kube.create(cluster, trainjob.group, trainjob.version, trainjob.plural, body)
      assert str(refused.value) == (
          'create trainjobs.trainer.kubeflow.org train-abc: forbidden in namespace team-a '
          '(trainjobs.trainer.kubeflow.org is forbidden: User "system:serviceaccount:team-a:'
          'default-editor" cannot create resource "trainjobs" in API group '
          '"trainer.kubeflow.org" in the namespace "team-a"); grant the step\'s service '
          'account what it needs: kubectl apply -n team-a -f kubeflow/manifests/'
          'trainer-rbac.yaml (on a multi-user install, every profile at once: kubectl apply '
          '-f kubeflow/manifests/trainer-rbac-kubeflow-edit.yaml)'), str(refused.value)
      return
    kube.create(cluster, trainjob.group, trainjob.version, trainjob.plural, body)
    assert store.created["trainjobs"] == ["train-abc"]
    # What the step does next: watch its job, read its workers' pods and logs.
    for verb, resource in (("watch", "trainjobs"), ("delete", "trainjobs"), ("list", "pods"),
                           ("get", "pods/log")):
      group = "trainer.kubeflow.org" if resource == "trainjobs" else ""
      assert rbac.allowed(store, ("team-a", "default-editor"), verb, group, resource,
                          "team-a"), (verb, resource)
    assert not rbac.allowed(store, ("team-b", "default-editor"), "create",
                            "trainer.kubeflow.org", "trainjobs", "team-b")
  finally:
    server.shutdown()


def _trainjob(mutate):
  body = trainjob.body(Job("train-abc", COMMAND, 2, PLACED), "kubeflow", None)
  mutate(body)
  return trainjob, body


def _tfjob(mutate):
  body = tfjob.body(Job("train-abc", COMMAND, 3, PLACED), "kubeflow", None)
  mutate(body)
  return tfjob, body


def _worker(body):
  return body["spec"]["tfReplicaSpecs"]["Worker"]


TJ = 'TrainJob.trainer.kubeflow.org "{}" is invalid: '
TF_HOOK = 'admission webhook "validator.tfjob.training-operator.kubeflow.org" denied the request: '
RULES = {
    # The TrainJob CRD of Kubeflow Trainer v2.2.0 (tests/fakes/crds/) and its CEL rules.
    "trainjob unknown field": (lambda: _trainjob(lambda b: b["spec"]["trainer"].update(gpus=1)),
                               'strict decoding error: unknown field "spec.trainer.gpus"'),
    "trainjob type": (lambda: _trainjob(lambda b: b["spec"]["trainer"].update(numNodes="2")),
                      TJ.format("train-abc") + 'spec.trainer.numNodes: Invalid value: "str": '
                      'spec.trainer.numNodes in body must be of type integer: "str"'),
    "trainjob required": (lambda: _trainjob(lambda b: b["spec"].pop("runtimeRef")),
                          TJ.format("train-abc") + "spec.runtimeRef: Required value"),
    "trainjob name RFC 1035": (
        lambda: _trainjob(lambda b: b["metadata"].update(name="7-train")),
        TJ.format("7-train") + '<nil>: Invalid value: "object": metadata.name must match '
        'RFC 1035 DNS label format'),
    "trainjob name length": (
        lambda: _trainjob(lambda b: b["metadata"].update(name="t" * 64)),
        TJ.format("t" * 64) + '<nil>: Invalid value: "object": metadata.name must be no '
        'more than 63 characters'),
    "label value": (lambda: _trainjob(lambda b: b["metadata"]["labels"].update(
        run="digits-" + "x" * 60)),
        TJ.format("train-abc") + 'metadata.labels: Invalid value: "digits-' + "x" * 60 +
        '": must be no more than 63 characters'),
    # The TFJob CRD of release-1.9, and its webhook.
    "tfjob unknown field": (lambda: _tfjob(lambda b: _worker(b).update(restarts=1)),
                            'strict decoding error: unknown field '
                            '"spec.tfReplicaSpecs.Worker.restarts"'),
    "tfjob type": (lambda: _tfjob(lambda b: _worker(b).update(replicas="3")),
                   'TFJob.kubeflow.org "train-abc" is invalid: spec.tfReplicaSpecs.Worker.'
                   'replicas: Invalid value: "str": spec.tfReplicaSpecs.Worker.replicas in body '
                   'must be of type integer: "str"'),
    "tfjob container name": (
        lambda: _tfjob(lambda b: _worker(b)["template"]["spec"]["containers"][0].update(
            name="main")),
        TF_HOOK + "spec.tfReplicaSpecs[Worker].template.spec.containers: Required value: "
        "must have at least one container with name tensorflow"),
    "tfjob image": (
        lambda: _tfjob(lambda b: _worker(b)["template"]["spec"]["containers"][0].update(
            image="")),
        TF_HOOK + "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required "
        "value: must be required"),
    "tfjob two chiefs": (
        lambda: _tfjob(lambda b: b["spec"]["tfReplicaSpecs"].update(
            Chief=_worker(b), Master=_worker(b))),
        TF_HOOK + "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master "
        "role"),
    "tfjob name": (
        lambda: _tfjob(lambda b: b["metadata"].update(name="train.abc")),
        TF_HOOK + 'metadata.name: Invalid value: "train.abc": should match: a DNS-1035 label '
        "must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_stand_in_refuses_what_upstream_refuses_in_its_words(trainer_api, rule):
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  make, message = RULES[rule]
  engine, body = make()
  with pytest.raises(ClusterError) as refused:
    kube.create(kube.Cluster(), engine.group, engine.version, engine.plural, body)
  assert message in str(refused.value), str(refused.value)
  assert set(trainer_api.created) == {"trainingruntimes"}, "a refused object was stored"


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2", "2.3"])
def test_the_launchers_objects_pass_each_releases_crd_and_webhooks(trainer_api, version):
  from trainer.jobs import kube
  trainer_api.trainer_version = version
  cluster = kube.Cluster()
  job = Job("train-abc", COMMAND, 2, PLACED)
  trainjob.create(cluster, job, trainjob.body(job, "kubeflow", None))
  engine, body = _tfjob(lambda b: None)
  engine.create(cluster, job, body)
  assert {k: v for k, v in trainer_api.created.items() if k != "trainingruntimes"} == {
      "trainjobs": ["train-abc"], "tfjobs": ["train-abc"]}


def test_the_shipped_runtime_passes_the_trainingruntime_webhook_and_a_broken_one_is_refused(
    trainer_api):
  """kubectl apply of kubeflow/manifests/trainingruntime.yaml meets the
  Trainer's TrainingRuntime webhook (tests/fakes/admission.py)."""
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  trainer_api.installed.add("trainingruntimes")
  (runtime,) = _manifests("trainingruntime.yaml")
  trainer_api.delete(("trainer.kubeflow.org/v1alpha1", "kubeflow", "trainingruntimes",
                      runtime["metadata"]["name"]))  # kubectl apply's, through the API
  cluster = kube.Cluster()
  kube.create(cluster, trainjob.group, trainjob.version, "trainingruntimes", runtime)
  runtime["metadata"]["name"] = "broken"
  node = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
  node["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = "trainer"
  node["replicas"] = 2
  with pytest.raises(ClusterError) as refused:
    kube.create(cluster, trainjob.group, trainjob.version, "trainingruntimes", runtime)
  said = str(refused.value)
  assert ('admission webhook "validator.trainingruntime.trainer.kubeflow.org" denied the '
          'request: [spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always '
          'must be 1, spec.template.spec.replicatedJobs[0].template.spec.template.spec.'
          'containers: Invalid value: []v1.Container{trainer}: must contain the required '
          'container for the ancestor: trainer]') in said, said
  assert trainer_api.created["trainingruntimes"] == ["tfrecord-pipeline-tensorflow"] * 2


def test_a_trainjob_whose_runtime_is_missing_is_refused_by_the_trainers_webhook(trainer_api):
  """Without the launcher's own check first (trainjob.check), the cluster
  refuses the TrainJob at create, in the Trainer's words."""
  from trainer.jobs import kube
  from trainer.jobs.job import ClusterError
  trainer_api.delete(("trainer.kubeflow.org/v1alpha1", "kubeflow", "trainingruntimes",
                      trainjob.RUNTIME))
  body = trainjob.body(Job("train-abc", COMMAND, 2, POD), "kubeflow", None)
  with pytest.raises(ClusterError) as refused:
    kube.create(kube.Cluster(), trainjob.group, trainjob.version, trainjob.plural, body)
  assert ('denied the request: spec.runtimeRef: Invalid value: v1alpha1.RuntimeRef{Name:'
          '"tfrecord-pipeline-tensorflow", Kind:"TrainingRuntime"}: trainingruntimes.trainer.'
          'kubeflow.org "tfrecord-pipeline-tensorflow" not found: specified trainingRuntime '
          'must be created before the TrainJob is created') in str(refused.value)

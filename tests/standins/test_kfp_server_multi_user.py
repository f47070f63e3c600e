"""The stand-in API server in multi-user mode (tests/fakes/kfp_server.py)
checks a namespace as kubeflow/pipelines `backend/src/apiserver` does at
2.17.0: experiments carry it, runs take their experiment's, a user acts only
where RBAC lets them, and a shared pipeline is anyone's to upload and read
but, from 2.17.0, the KFP namespace's users' alone to delete from."""

import json

import pytest
import requests

from tests.fakes import kfp_server

API = kfp_server.API
SPEC = json.dumps({"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}},
                   "schemaVersion": "2.1.0", "sdkVersion": "kfp-2.5.0"})


@pytest.fixture(params=[(2, 17), (2, 16)], ids=["2.17", "2.16"])
def server(request):
  url, state, stop = kfp_server.serve(multi_user=True, version=request.param)
  state.users.update({"a": ("alice", {"team-a"}), "admin": ("admin", {"team-a", "kubeflow"})})
  yield url, state, request.param
  stop()


def call(url, method, path, token="a", **kwargs):
  headers = {"Authorization": f"Bearer {token}"} if token else {}
  return requests.request(method, f"{url}{API}/{path}", headers=headers, timeout=10, **kwargs)


def upload(url, namespace="", token="a"):
  params = {"name": "p", **({"namespace": namespace} if namespace else {})}
  return call(url, "POST", "pipelines/upload", token, params=params,
              files={"uploadfile": ("p.yaml", SPEC)})


def test_healthz_says_multi_user_and_its_version_and_a_request_without_identity_is_401(
    server):
  url, state, _ = server
  found = requests.get(f"{url}{API}/healthz", timeout=10).json()
  assert (found["multi_user"], found["tag_name"]) == (True, "%d.%d.0" % state.version)
  found = call(url, "GET", "experiments", token=None, params={"namespace": "team-a"})
  assert found.status_code == 401, f"expected 401, found {found.status_code}"


def test_experiments_need_a_namespace_the_user_may_act_in(server):
  url, state, _ = server
  statuses = {ns: call(url, "POST", "experiments", json={"display_name": "e", **(
      {"namespace": ns} if ns else {})}).status_code for ns in ("", "team-b", "team-a")}
  assert statuses == {"": 400, "team-b": 403, "team-a": 200}, statuses
  assert call(url, "GET", "experiments", params={"namespace": "team-b"}).status_code == 403
  listed = call(url, "GET", "experiments", params={"namespace": "team-a"}).json()
  assert [e["namespace"] for e in listed["experiments"]] == ["team-a"], listed


def test_a_run_takes_its_experiments_namespace_and_needs_one(server):
  url, state, _ = server
  pipeline = upload(url).json()
  (version,) = state.versions_of(pipeline["pipeline_id"])
  body = {"display_name": "r", "pipeline_version_reference": {
      "pipeline_id": pipeline["pipeline_id"],
      "pipeline_version_id": version["pipeline_version_id"]}}
  assert call(url, "POST", "runs", json=body).status_code == 400, "expected an experiment asked"
  state.experiments["theirs"] = {"experiment_id": "theirs", "display_name": "e",
                                 "namespace": "team-b"}
  state.experiments["mine"] = {"experiment_id": "mine", "display_name": "e",
                               "namespace": "team-a"}
  assert call(url, "POST", "runs", json={**body, "experiment_id": "theirs"}).status_code == 403
  assert call(url, "POST", "runs", json={**body, "experiment_id": "mine"}).status_code == 200
  assert call(url, "GET", "runs", params={"experiment_id": "theirs"}).status_code == 403


def test_a_shared_pipeline_is_uploaded_by_anyone_and_deleted_by_kfps_users_from_217(server):
  url, state, version = server
  shared = upload(url).json()
  assert "namespace" not in shared, shared
  (kept,) = state.versions_of(shared["pipeline_id"])
  path = f"pipelines/{shared['pipeline_id']}/versions/{kept['pipeline_version_id']}"
  deleted = call(url, "DELETE", path)
  expected = 403 if version >= (2, 17) else 200
  assert deleted.status_code == expected, (f"{version}: expected {expected}, found "
                                           f"{deleted.status_code} {deleted.text}")
  if version >= (2, 17):
    assert "Check if you have permission to delete shared pipelines" in deleted.json()["message"]
    assert call(url, "DELETE", path, token="admin").status_code == 200


def test_a_namespaces_pipeline_is_its_users_alone(server):
  url, state, _ = server
  refused = upload(url, "team-b")
  assert (refused.status_code, refused.json()["message"]) == (400, "Failed to create a pipeline")
  mine = upload(url, "team-a").json()
  assert mine["namespace"] == "team-a"
  (version,) = state.versions_of(mine["pipeline_id"])
  listed = call(url, "GET", "pipelines", params={"namespace": "team-a"}).json()["pipelines"]
  assert [p["pipeline_id"] for p in listed] == [mine["pipeline_id"]]
  assert call(url, "GET", "pipelines").json()["pipelines"] == [], "expected no shared pipeline"
  path = f"pipelines/{mine['pipeline_id']}/versions/{version['pipeline_version_id']}"
  assert call(url, "DELETE", path).status_code == 200

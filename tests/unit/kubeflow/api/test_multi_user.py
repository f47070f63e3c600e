"""kubeflow/api/multi_user.py: what a multi-user install's API server asks
beyond a single-user one's, against the stand-in server in multi-user mode
(tests/fakes/kfp_server.py). The commands over it:
tests/unit/commands/kubeflow/test_runs.py."""

import kfp
import pytest

from kubeflow.api import multi_user
from kubeflow.errors import KubeflowError
from runtime import kube
from tests.fakes import kfp_server


def test_a_namespace_is_required_of_a_multi_user_server_outside_a_pod(monkeypatch, tmp_path):
  monkeypatch.setattr(kube, "NAMESPACE_FILE", str(tmp_path / "none"))
  with pytest.raises(KubeflowError) as raised:
    multi_user.require_namespace("http://kfp", {"multi_user": True}, None)
  assert str(raised.value) == ("Kubeflow Pipelines at http://kfp is a multi-user install: "
                               "expected --namespace, your profile's namespace, found none")
  multi_user.require_namespace("http://kfp", {"multi_user": True}, "team-a")
  multi_user.require_namespace("http://kfp", {"multi_user": False}, None)
  multi_user.require_namespace("http://kfp", {}, None)
  # Inside a pod kfp's client takes the pod's own namespace.
  (tmp_path / "none").write_text("team-a")
  multi_user.require_namespace("http://kfp", {"multi_user": True}, None)


def test_the_namespaces_pipeline_is_found_not_a_shared_one_of_the_same_name():
  url, state, stop = kfp_server.serve(multi_user=True)
  try:
    state.users["t"] = ("alice", {"team-a"})
    state.pipelines.update({
        "shared": {"pipeline_id": "shared", "display_name": "digits"},
        "mine": {"pipeline_id": "mine", "display_name": "digits", "namespace": "team-a"},
        "theirs": {"pipeline_id": "theirs", "display_name": "digits", "namespace": "team-b"}})
    client = kfp.Client(host=url, namespace="team-a", existing_token="t")
    assert multi_user.pipeline_id(client, "digits", "team-a") == "mine"
    assert multi_user.pipeline_id(client, "digits", None) == "shared"
    assert multi_user.pipeline_id(client, "wine", "team-a") is None
  finally:
    stop()

"""Nodes for the GPUs a step or the Trainer's workers ask for, planted on
the stand-in's GPU pool (tests/doctor_install.py: two nodes of 2 GPUs,
labelled and tainted as a managed pool is)."""

import pytest

from kubeflow.doctor import nodes
from kubeflow.doctor.needs import GpuPods
from tests.doctor_install import GPU_TAINT, POOL, READER, Install, doctor, only, spec

PLACED = {"nodeSelector": POOL, "tolerations": [GPU_TAINT]}


def workers(gpus: int) -> dict:
  return {**PLACED, "resources": {"gpus": gpus, "gpu_type": "nvidia.com/gpu"}}


def test_workers_that_fit_the_gpu_pool_are_ok(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="tfjob", worker_pod=workers(2))
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 0, found
  assert only(found, "ok  nodes for the 2 tfjob workers (each 2 nvidia.com/gpu)")


@pytest.mark.parametrize("pod, gpus", [
    (workers(3), 3),  # more per worker than a node has
    ({**workers(2), "tolerations": []}, 2),  # the pool's taint not tolerated
    ({**workers(2), "nodeSelector": {"pool": "a100"}}, 2)])  # no node so labelled
def test_no_node_with_enough_gpus_fails_naming_the_flags(tmp_path, monkeypatch, capsys,
                                                          pod, gpus):
  path = spec(tmp_path / "c", engine="trainjob", worker_pod=pod)
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 1
  line = only(found, f"FAIL nodes for the 2 trainjob workers (each {gpus} nvidia.com/gpu)")
  assert f"with room for 2 pod(s) of {gpus} nvidia.com/gpu (allocatable), found room for 0 " \
         "(nodes with nvidia.com/gpu: gpu-0, gpu-1)" in line, line
  assert "fix: compile with --resource, --node-selector and --toleration" in line, line


def test_a_step_with_a_gpu_and_no_gpu_node_fails(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", gpus={"Trainer": {"count": 1, **PLACED}})
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    status, found = doctor(capsys, path)
    assert (status, only(found, "ok  nodes for")) == (
        0, "ok  nodes for the step Trainer (1 nvidia.com/gpu)")
    for name in ("gpu-0", "gpu-1"):
      install.store.delete(("v1", "", "nodes", name))
    status, found = doctor(capsys, path)
  assert status == 1
  assert "found room for 0 (nodes with nvidia.com/gpu: none)" in only(
      found, "FAIL nodes for the step Trainer (1 nvidia.com/gpu)")


def test_a_user_who_may_not_list_nodes_gets_not_checked(tmp_path, monkeypatch, capsys):
  path = spec(tmp_path / "c", engine="tfjob", worker_pod=workers(1))
  with Install(tmp_path, monkeypatch, spec_path=path, user_rules=READER):
    status, found = doctor(capsys, path)
  assert status == 0, found
  line = only(found, "not checked nodes for the 2 tfjob workers")
  assert "may not list nodes (cluster-scoped) (HTTP 403)" in line, line
  assert "kubectl get nodes -o custom-columns=" in line, line


def test_tolerations_match_as_kubernetes_matches_them():
  taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
  assert nodes.tolerates({"key": "nvidia.com/gpu", "operator": "Exists"}, taint)
  assert nodes.tolerates({"operator": "Exists"}, taint)
  assert nodes.tolerates({**taint, "operator": "Equal"}, taint)
  assert not nodes.tolerates({**taint, "value": "absent"}, taint)
  assert not nodes.tolerates({**taint, "effect": "NoExecute"}, taint)
  soft = {"metadata": {}, "spec": {"taints": [{**taint, "effect": "PreferNoSchedule"}]},
          "status": {"allocatable": {"nvidia.com/gpu": "4"}}}
  assert nodes.holds(soft, GpuPods("w", "nvidia.com/gpu", 2, 1, {}, [])) == 2

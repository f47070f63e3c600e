"""The stand-in Kubernetes API (tests/fakes/kubernetes_api.py) serves the
cluster-scoped objects doctor reads as the real one does, read through the
`kubernetes` client's own models: a CRD of the release the store runs, 404
once uninstalled; nodes with their labels, taints and allocatable GPUs."""

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.doctor_install import GPU_TAINT, POOL, Install, spec


@pytest.mark.parametrize("version, field", [("2.0", "podSpecOverrides"),
                                            ("2.1", "podTemplateOverrides"),
                                            ("2.3", "runtimePatches")])
def test_the_trainjob_crd_is_the_release_the_cluster_runs(tmp_path, monkeypatch, version, field):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path, trainer_version=version) as install:
    api = client.ApiextensionsV1Api(config.new_client_from_config(install.kubeconfig))
    crd = api.read_custom_resource_definition("trainjobs.trainer.kubeflow.org")
    (served,) = crd.spec.versions
    assert served.name == "v1alpha1"
    assert field in served.schema.open_apiv3_schema.properties["spec"].properties
    install.uninstall("trainjobs")
    with pytest.raises(ApiException) as refused:
      api.read_custom_resource_definition("trainjobs.trainer.kubeflow.org")
  assert refused.value.status == 404


def test_nodes_are_listed_with_labels_taints_and_allocatable_gpus(tmp_path, monkeypatch):
  path = spec(tmp_path / "c")
  with Install(tmp_path, monkeypatch, spec_path=path) as install:
    found = client.CoreV1Api(config.new_client_from_config(install.kubeconfig)).list_node()
  gpu = {n.metadata.name: n for n in found.items}["gpu-0"]
  assert gpu.status.allocatable["nvidia.com/gpu"] == "2"
  assert gpu.metadata.labels == POOL
  assert [(t.key, t.value, t.effect) for t in gpu.spec.taints] == [tuple(GPU_TAINT.values())]

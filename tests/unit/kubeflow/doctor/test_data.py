"""kubeflow/doctor/data.py without a store to reach: the line that says how
to reach the steps' store from this machine names its own Service, port
and namespace (the store's listing itself: tests/processes/kubeflow/doctor/
test_data.py)."""

import pytest

from kubeflow.doctor import data
from tests.doctor_install import Install, doctor, only, spec


@pytest.mark.parametrize("endpoint, forward", [
    # Kubeflow 1.11.0's Pipelines 2.15.0: SeaweedFS behind minio-service.
    ("http://minio-service.kubeflow:9000", "kubectl -n kubeflow port-forward svc/minio-service "
                                           "9000) and pass --store-endpoint http://localhost:9000"),
    ("http://seaweedfs.kubeflow:9000", "kubectl -n kubeflow port-forward svc/seaweedfs 9000) "
                                       "and pass --store-endpoint http://localhost:9000"),
    # A store in the run's own namespace, named without one.
    ("http://minio:9000", "kubectl -n team-a port-forward svc/minio 9000) and pass "
                          "--store-endpoint http://localhost:9000")])
def test_the_port_forward_names_the_steps_service(tmp_path, monkeypatch, capsys, endpoint,
                                                  forward):
  path = spec(tmp_path / "c", endpoint=endpoint)
  with Install(tmp_path, monkeypatch, spec_path=path):
    status, found = doctor(capsys, path)
  assert status == 0, found
  line = only(found, "not checked the pipeline root, the data root, the serving dir")
  assert line.endswith(f"the steps' S3_ENDPOINT {endpoint} is the cluster's own name; reach "
                       f"the store through a port-forward ({forward}"), line


def test_a_store_outside_the_cluster_takes_no_port_forward():
  assert data.forward("https://s3.eu-west-1.amazonaws.com", "team-a") == (
      "pass --store-endpoint with a URL this machine reaches the store at")

"""trainer/jobs/vertex_machines.py: a CustomJob's GPU on a machine of the
family it attaches to, chosen or checked before anything runs."""

import pytest

from trainer.jobs import vertex_machines
from trainer.jobs.job import Job
from trainer.jobs.vertex import body


@pytest.mark.parametrize("gpu_type, gpus, machine", [
    (None, 0, "n1-standard-4"), ("NVIDIA_TESLA_T4", 2, "n1-standard-4"),
    ("NVIDIA_L4", 1, "g2-standard-8"), ("NVIDIA_L4", 4, "g2-standard-48"),
    ("NVIDIA_TESLA_A100", 2, "a2-highgpu-2g"), ("NVIDIA_A100_80GB", 1, "a2-ultragpu-1g"),
    ("NVIDIA_H100_80GB", 8, "a3-highgpu-8g")])
def test_a_worker_without_a_named_machine_gets_one_its_gpus_attach_to(gpu_type, gpus, machine):
  pod = {"resources": {"gpus": gpus, "gpu_type": gpu_type}} if gpus else {}
  sent = body(Job("train-1", ["python"], 2, pod))
  pools = sent["job_spec"]["worker_pool_specs"]
  assert [p["machine_spec"]["machine_type"] for p in pools] == [machine] * 2


def test_an_l4_on_an_n1_machine_is_refused_naming_the_machine_to_use():
  assert vertex_machines.check("n1-standard-4", "NVIDIA_L4", 1) == (
      "NVIDIA_L4 attaches to g2-* machines only, found n1-standard-4; use "
      "--train-machine-type g2-standard-8")
  assert "a2-highgpu-* or a2-megagpu-*" in vertex_machines.check(
      "n1-standard-8", "NVIDIA_TESLA_A100", 1)
  assert vertex_machines.check("g2-standard-24", "NVIDIA_L4", 2) is None
  assert vertex_machines.check(None, "NVIDIA_TESLA_T4", 3) is None


def test_a_gpu_count_no_machine_of_the_family_holds_is_refused():
  assert vertex_machines.check(None, "NVIDIA_TESLA_A100", 3).startswith(
      "3 x NVIDIA_TESLA_A100: its machines hold 1, 2, 4, 8, 16 GPUs")

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
    ("NVIDIA_H100_80GB", 8, "a3-highgpu-8g"), ("NVIDIA_GB200", 4, "a4x-highgpu-4g"),
    ("NVIDIA_RTX_PRO_6000", 2, "g4-standard-96"), ("NVIDIA_TESLA_V100", 8, "n1-standard-4")])
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
  assert vertex_machines.check(None, "NVIDIA_TESLA_T4", 4) is None
  assert "g4-standard-*" in vertex_machines.check("a4-highgpu-8g", "NVIDIA_RTX_PRO_6000", 8)


def test_a_gpu_count_no_machine_of_the_family_holds_is_refused():
  assert vertex_machines.check(None, "NVIDIA_TESLA_A100", 3).startswith(
      "3 x NVIDIA_TESLA_A100: its machines hold 1, 2, 4, 8, 16 GPUs")


@pytest.mark.parametrize("gpu_type, gpus, machine", [
    ("NVIDIA_TESLA_T4", 3, None), ("NVIDIA_TESLA_P4", 8, None), ("NVIDIA_TESLA_P100", 8, None),
    ("NVIDIA_TESLA_T4", 3, "n1-standard-16"), ("NVIDIA_TESLA_V100", 16, "n1-highmem-96")])
def test_n1_takes_its_gpus_in_compute_engines_counts_whatever_the_machine(gpu_type, gpus,
                                                                           machine):
  # T4, P4, P100: 1, 2 or 4; V100 also 8 (cloud.google.com/compute/docs/gpus, N1).
  held = "1, 2, 4, 8" if gpu_type == "NVIDIA_TESLA_V100" else "1, 2, 4"
  assert vertex_machines.check(machine, gpu_type, gpus).startswith(
      f"{gpus} x {gpu_type}: its machines hold {held} GPUs")


def test_every_gpu_vertex_names_has_a_family_or_is_refused_by_name():
  """A newer google-cloud-aiplatform that adds an accelerator fails here
  until FAMILIES or REFUSED says what to do with it."""
  from google.cloud.aiplatform_v1.types import AcceleratorType

  from kubeflow.compile.backend import vertex_gpu_types
  gpus = {a.name for a in AcceleratorType if a.name.startswith("NVIDIA_")}
  assert set(vertex_gpu_types()) == gpus
  assert not set(vertex_machines.FAMILIES) & set(vertex_machines.REFUSED)
  assert gpus == set(vertex_machines.FAMILIES) | set(vertex_machines.REFUSED), (
      gpus ^ (set(vertex_machines.FAMILIES) | set(vertex_machines.REFUSED)))
  # The others (TPUs, unspecified) check_gpus refuses: the image is CUDA's.
  assert {a.name for a in AcceleratorType} - gpus == {
      "ACCELERATOR_TYPE_UNSPECIFIED", "TPU_V2", "TPU_V3", "TPU_V4_POD", "TPU_V5_LITEPOD"}
  assert vertex_machines.refused("NVIDIA_TESLA_K80").startswith("NVIDIA_TESLA_K80: Vertex")
  assert vertex_machines.refused("NVIDIA_NEXT").startswith(
      "NVIDIA_NEXT: no machine family known for it here")
  assert vertex_machines.refused("NVIDIA_GB200") is None

"""Which machine a Vertex AI CustomJob's GPU can be attached to.

Compute Engine attaches each GPU to one machine family only (its "GPU
machine types" page, cloud.google.com/compute/docs/gpus, as of 2026-11):
T4, V100, P100 and P4 to N1 (1, 2 or 4 of each, V100 also 8: the page's
N1 tables); L4 to G2; A100 40GB to A2 Standard (`a2-highgpu-*`,
`a2-megagpu-16g`); A100 80GB to A2 Ultra; H100 to A3 High (Mega: A3 Mega);
H200 to A3 Ultra; B200 to A4; GB200 to A4X (`a4x-highgpu-4g`, four GPUs);
RTX PRO 6000 to G4 (`g4-standard-48`, -96, -192, -384: 1, 2, 4, 8 GPUs;
also the names Compute Engine's API lists, dstackai/dstack#3213). Vertex
AI takes the same pairs for custom training and refuses any other when the
CustomJob is created, after every step before the Trainer ran. So the
machine is chosen by the accelerator (`machine_for`), and a
`--train-machine-type` of another family, or a GPU count no machine of the
family holds, is refused at compile time (`check`); so is an accelerator
Vertex still names but no longer runs (REFUSED).
"""

from typing import Optional

DEFAULT = "n1-standard-4"  # no GPU, or one of N1's: any count fits its 4 vCPUs
N1_COUNTS = {n: DEFAULT for n in (1, 2, 4)}
# accelerator -> (the machine type prefixes it attaches to, machine by GPU count)
FAMILIES = {
    "NVIDIA_TESLA_T4": (("n1-",), N1_COUNTS), "NVIDIA_TESLA_P4": (("n1-",), N1_COUNTS),
    "NVIDIA_TESLA_P100": (("n1-",), N1_COUNTS),
    "NVIDIA_TESLA_V100": (("n1-",), {**N1_COUNTS, 8: DEFAULT}),
    "NVIDIA_L4": (("g2-",), {1: "g2-standard-8", 2: "g2-standard-24", 4: "g2-standard-48",
                             8: "g2-standard-96"}),
    "NVIDIA_TESLA_A100": (("a2-highgpu-", "a2-megagpu-"),
                          {n: f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)} | {16: "a2-megagpu-16g"}),
    "NVIDIA_A100_80GB": (("a2-ultragpu-",), {n: f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)}),
    "NVIDIA_H100_80GB": (("a3-highgpu-",), {n: f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)}),
    "NVIDIA_H100_MEGA_80GB": (("a3-megagpu-",), {8: "a3-megagpu-8g"}),
    "NVIDIA_H200_141GB": (("a3-ultragpu-",), {8: "a3-ultragpu-8g"}),
    "NVIDIA_B200": (("a4-highgpu-",), {8: "a4-highgpu-8g"}),
    "NVIDIA_GB200": (("a4x-highgpu-",), {4: "a4x-highgpu-4g"}),
    "NVIDIA_RTX_PRO_6000": (("g4-standard-",), {1: "g4-standard-48", 2: "g4-standard-96",
                                                4: "g4-standard-192", 8: "g4-standard-384"}),
}
# Vertex's accelerator names that no CustomJob can get, and why.
REFUSED = {
    "NVIDIA_TESLA_K80": (
        "Vertex AI no longer runs it (AcceleratorType: \"Deprecated: Nvidia Tesla K80 GPU has "
        "reached end of support\", cloud.google.com/compute/docs/eol/k80-eol); choose "
        "NVIDIA_TESLA_T4 or NVIDIA_L4"),
}


def machine_for(gpu_type: Optional[str], gpus: int) -> str:
  """The machine a worker with `gpus` of `gpu_type` gets when none is named."""
  prefixes, by_count = FAMILIES.get(gpu_type or "", (("n1-",), {}))
  if prefixes == ("n1-",):
    return DEFAULT
  return by_count.get(gpus) or next(iter(by_count.values()))


def refused(gpu_type: str) -> Optional[str]:
  """Why no CustomJob can get `gpu_type`, a Vertex accelerator name, with
  what to choose; None when a machine family takes it."""
  if gpu_type in REFUSED:
    return f"{gpu_type}: {REFUSED[gpu_type]}"
  if gpu_type not in FAMILIES:  # a name newer than this table
    return (f"{gpu_type}: no machine family known for it here (trainer/jobs/"
            f"vertex_machines.py FAMILIES); choose one of {', '.join(FAMILIES)}")
  return None


def check(machine_type: Optional[str], gpu_type: Optional[str], gpus: int) -> Optional[str]:
  """Why `machine_type` cannot hold the GPUs, with the machine to use; None if it can."""
  if not gpus or not gpu_type or gpu_type not in FAMILIES:
    return None
  prefixes, by_count = FAMILIES[gpu_type]
  if machine_type and not machine_type.startswith(prefixes):
    return (f"{gpu_type} attaches to {' or '.join(p + '*' for p in prefixes)} machines "
            f"only, found {machine_type}; use --train-machine-type "
            f"{machine_for(gpu_type, gpus)}")
  # N1 takes its GPUs in these counts whatever the machine; the other
  # families' machines each hold one count.
  if (not machine_type or prefixes == ("n1-",)) and gpus not in by_count:
    return (f"{gpus} x {gpu_type}: its machines hold {', '.join(map(str, by_count))} "
            f"GPUs; choose one of those counts, or a machine with --train-machine-type")
  return None

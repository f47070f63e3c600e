"""GPUs: for each step (`--resource STEP:gpus=N`) and for the Trainer's
workers (`--train-workers N` on trainjob or tfjob, one pod each), nodes the
pods may be scheduled on, with enough allocatable GPUs between them.

A pod that no node can hold stays Pending, and the run waits on it without
an error: a worker's until the job's timeout, a step's for ever. The
scheduler's rules checked here (kubernetes@v1.31.0):
- the node's labels match the pod's nodeSelector (pkg/scheduler/framework/
  plugins/nodeaffinity);
- each taint with effect NoSchedule or NoExecute is tolerated by one of the
  pod's tolerations (plugins/tainttoleration; a toleration matches as
  staging/src/k8s.io/api/core/v1/toleration.go ToleratesTaint says: the
  same key, or none with Exists; Exists, or Equal with the same value; the
  same effect, or none);
- the node's `status.allocatable` holds the pod's GPUs (plugins/noderesources).
Allocatable, not free: what other pods hold now is left to the run (it
changes by the minute). Listing nodes is cluster-scoped: a profile's user
usually may not, and then gets "not checked".
"""

from typing import Dict, List

from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import GpuPods, Needs

FILTERING = ("NoSchedule", "NoExecute")  # PreferNoSchedule only scores


def tolerates(toleration: Dict, taint: Dict) -> bool:
  """Whether `toleration` tolerates `taint` (toleration.go ToleratesTaint)."""
  if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
    return False
  if toleration.get("key") and toleration["key"] != taint.get("key"):
    return False
  if toleration.get("operator", "Equal") == "Exists":
    return True
  return toleration.get("key", "") != "" and toleration.get("value", "") == taint.get(
      "value", "")


def holds(node: Dict, pods: GpuPods) -> int:
  """How many of `pods` the node can hold by its labels, taints and GPUs."""
  labels = node.get("metadata", {}).get("labels") or {}
  if any(labels.get(k) != v for k, v in pods.selector.items()):
    return 0
  if node.get("spec", {}).get("unschedulable"):
    return 0
  for taint in node.get("spec", {}).get("taints") or []:
    if taint.get("effect") in FILTERING and not any(
        tolerates(t, taint) for t in pods.tolerations):
      return 0
  gpus = node.get("status", {}).get("allocatable", {}).get(pods.resource, "0")
  return int(gpus) // pods.count


def _placed(pods: GpuPods) -> str:
  shown = [f"{k}={v}" for k, v in pods.selector.items()]
  return f"nodes labelled {', '.join(shown)}" if shown else "any node"


def _line(pods: GpuPods, nodes: List[Dict]) -> lines.Line:
  each = "each " if pods.pods > 1 else ""
  what = f"nodes for {pods.who} ({each}{pods.count} {pods.resource})"
  fit = sum(holds(node, pods) for node in nodes)
  if fit >= pods.pods:
    return lines.ok(what)
  near = [n["metadata"]["name"] for n in nodes
          if int(n.get("status", {}).get("allocatable", {}).get(pods.resource, "0") or 0)]
  return lines.fail(
      what, f"expected {_placed(pods)} whose taints the pods tolerate, with room for "
            f"{pods.pods} pod(s) of {pods.count} {pods.resource} (allocatable), found room "
            f"for {fit} (nodes with {pods.resource}: {', '.join(near) or 'none'})",
      "compile with --resource, --node-selector and --toleration that match a GPU node pool "
      "(kubectl get nodes --show-labels; kubectl describe node NAME shows its taints and "
      "Allocatable), or fewer --train-workers; or ask the cluster admin for GPU nodes")


def check(needs: Needs, reader: Reader) -> List[lines.Line]:
  """A line per step or workers that need GPUs."""
  if not needs.gpus:
    return []
  try:
    nodes = reader.nodes()
  except Unreadable as e:
    return [lines.unchecked(f"nodes for {pods.who} ({pods.count} {pods.resource})",
                            f"{e}; an admin can list them: kubectl get nodes -o custom-columns="
                            f"NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu,"
                            f"TAINTS:.spec.taints")
            for pods in needs.gpus]
  return [_line(pods, nodes) for pods in needs.gpus]

"""Every check, in the order a run meets what it checks: the paths, the
launcher's store and its Secrets (the first step), then the Trainer's job,
the nodes for the GPUs, and KServe (later steps)."""

from typing import List

from kubeflow.doctor import lines, nodes, profile, serving, store, training
from kubeflow.doctor.cluster import Reader
from kubeflow.doctor.needs import Needs


def offline(needs: Needs) -> List[lines.Line]:
  """The lines no cluster is read for."""
  return profile.check(needs)


def on_cluster(needs: Needs, reader: Reader) -> List[lines.Line]:
  """The lines for `needs` on the cluster `reader` reads."""
  out, provider = store.check_providers(needs, reader)
  out += store.check_secrets(needs, reader, provider)
  out = profile.compiled_for(needs, out) + out  # what the namespace's store lines follow from
  return (out + training.check(needs, reader) + nodes.check(needs, reader)
          + serving.check(needs, reader))

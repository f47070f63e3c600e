"""KServe (compiled with `--kserve`): the cluster serves the
InferenceService API the KServeDeploy step creates (serving/kserve.py)."""

from typing import List

from kubeflow.doctor import lines
from kubeflow.doctor.cluster import Reader
from kubeflow.doctor.needs import Needs
from serving import kserve


def check(needs: Needs, reader: Reader) -> List[lines.Line]:
  if not needs.kserve:
    return []
  what = f"KServe's InferenceService API ({kserve.PLURAL}.{kserve.GROUP}/{kserve.API_VERSION})"
  if reader.serves(kserve.GROUP, kserve.API_VERSION, kserve.PLURAL):
    return [lines.ok(what)]
  return [lines.fail(what, "expected the cluster to serve it, found no such API (KServe's "
                           "CRDs are not installed)", kserve.GRANTS.missing_api)]

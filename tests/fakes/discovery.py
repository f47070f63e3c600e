"""A STAND-IN of the API server's discovery, for kubernetes_api.py: which
resources an API group version serves.

As kubernetes' apiserver does (kubernetes/kubernetes@b547a95
`staging/src/k8s.io/apiserver/pkg/endpoints/discovery/version.go` lines
43-51 and 84-93, the APIVersionHandler): `GET /apis/GROUP/VERSION`
answers an APIResourceList of the resources served there, and a group
version that nothing serves (a CRD never installed) answers 404 "the server could not find the requested
resource". Every user may ask: the bootstrap ClusterRoleBinding
`system:discovery` binds the ClusterRole of that name, `get` on `/apis/*`,
to every authenticated and unauthenticated user
(kubernetes/kubernetes@0016f7f `plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/policy.go`, ClusterRoleBindings), so no RBAC rule here
refuses it.

Not modelled: the aggregated discovery document (`/apis` with
`application/json;as=APIGroupDiscoveryList`), `/api`, short names and
categories.
"""

import re
from typing import Dict, Iterable, Optional, Tuple

PATH = re.compile(r"^/apis/(?P<group>[^/]+)/(?P<version>[^/]+)/?$")
# plural -> (group/version, Kind, namespaced): the resources the stand-in serves.
RESOURCES: Dict[str, Tuple[str, str, bool]] = {
    "trainjobs": ("trainer.kubeflow.org/v1alpha1", "TrainJob", True),
    "trainingruntimes": ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", True),
    "clustertrainingruntimes": ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime",
                                False),
    "tfjobs": ("kubeflow.org/v1", "TFJob", True),
    "inferenceservices": ("serving.kserve.io/v1beta1", "InferenceService", True),
    "workflows": ("argoproj.io/v1alpha1", "Workflow", True),
}
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def resource_list(path: str, installed: Iterable[str]) -> Optional[dict]:
  """The APIResourceList `path` answers, or None: not a discovery path, or
  a group version with nothing installed (the caller answers 404)."""
  match = PATH.match(path)
  if not match:
    return None
  group_version = f"{match['group']}/{match['version']}"
  served = [{"name": plural, "singularName": kind.lower(), "namespaced": namespaced,
             "kind": kind, "verbs": VERBS}
            for plural, (gv, kind, namespaced) in sorted(RESOURCES.items())
            if gv == group_version and plural in installed]
  if not served:
    return None
  return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
          "resources": served}

"""What a multi-user install's API server asks of a client beyond a
single-user one's (kubeflow/pipelines `backend/src/apiserver` at 2.17.0).

- A namespace. Experiments, and so runs and recurring runs, live in a
  profile namespace, which every call names (`server/experiment_server.go`
  lines 341-368); without one the server answers HTTP 400 to the first
  call. kfp's client takes the pod's own namespace inside a pod; elsewhere
  `--namespace` must say it, and `require_namespace` says so in one line.
- The pipeline in that namespace. A pipeline uploaded without a namespace
  is shared with every namespace: another team's `submit` of a pipeline
  of the same name adds its versions to it, and from 2.17.0 only those
  with rights in the KFP namespace itself may delete them
  (`server/pipeline_server.go` lines 1290-1306), so the version a failed
  run leaves could not be deleted. With a namespace, `submit` and
  `schedule` upload into it, and find the pipeline there.
"""

import json
import os
from typing import Optional

from kubeflow.errors import KubeflowError
from runtime import kube


def require_namespace(host: str, healthz: dict, namespace: Optional[str]) -> None:
  """Raises KubeflowError when a multi-user server is asked without a
  namespace, outside a pod (inside one, kfp takes the pod's).

  Args:
    healthz: the server's healthz answer (its `multi_user`).
  """
  if healthz.get("multi_user") is True and not namespace and not os.path.exists(
      kube.NAMESPACE_FILE):
    raise KubeflowError(f"Kubeflow Pipelines at {host} is a multi-user install: expected "
                        f"--namespace, your profile's namespace, found none")


def pipeline_id(client, name: str, namespace: Optional[str]) -> Optional[str]:
  """The id of pipeline `name`: the namespace's, or without a namespace a
  shared one (kfp's own lookup, which knows no namespace)."""
  if not namespace:
    return client.get_pipeline_id(name)
  named = json.dumps({"predicates": [{"operation": "EQUALS", "key": "display_name",
                                      "stringValue": name}]})
  found = client.list_pipelines(filter=named, namespace=namespace).pipelines or []
  return found[0].pipeline_id if found else None

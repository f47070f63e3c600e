"""Reading the user's cluster for the checks, with the user's kubeconfig
(runtime/kube.py): what the user may not read is `Unreadable`, which a
check turns into "not checked", never into a failure.
"""

from typing import Dict, List, Optional, Tuple

from runtime import kube

# doctor creates nothing; a refusal of its reads is the user's own rights.
GRANTS = kube.Grants("(nothing: doctor only reads)", "(nothing: doctor only reads)",
                     "install it")


class Unreadable(Exception):
  """The user may not read what a check needs: why, in a few words."""


class Reader:
  """The cluster the kubeconfig names, read in one namespace.

  Raises (on construction):
    ClusterError: no kubeconfig reaches a cluster.
  """

  def __init__(self, namespace: str):
    self.cluster = kube.Cluster(GRANTS)
    self.cluster.namespace = namespace
    self.namespace = namespace
    self._secrets: Dict[str, object] = {}  # name -> the Secret read (None: not there)
    self._customs: Dict[tuple, Optional[Dict]] = {}  # (group, version, plural, name) -> it

  def _read(self, what: str, fn, *args, where: str = "", **kwargs):
    """fn(*args), None for a missing object; Unreadable when refused.
    `where`: "" for the namespace, else what is read (cluster-scoped)."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError
    try:
      return fn(*args, **kwargs)
    except HTTPError as e:  # no answer at all: the kubeconfig's cluster is down or elsewhere
      reason = str(getattr(e, "reason", None) or e).rsplit(": ", 1)[-1]
      raise kube.ClusterError(
          f"cannot reach the Kubernetes API server at "
          f"{self.cluster.core.api_client.configuration.host} (your kubeconfig's current "
          f"context): {reason}") from None
    except ApiException as e:
      if e.status == 404:
        return None
      if e.status in (401, 403):
        raise Unreadable(f"your kubeconfig's user may not {what} "
                         f"{where or 'in namespace ' + self.namespace} (HTTP {e.status})"
                         ) from None
      raise kube.ClusterError(kube.explain(what, self.namespace, e.status, e.reason, e.body,
                                           GRANTS)) from None

  def configmap(self, name: str) -> Optional[Dict[str, str]]:
    """The ConfigMap's data ({} for none), or None when there is no such ConfigMap."""
    found = self._read(f"get configmap {name}", self.cluster.core.read_namespaced_config_map,
                       name, self.namespace)
    return None if found is None else dict(found.data or {})

  def _secret(self, name: str):
    """The Secret `name` as the client reads it, or None: read once, as
    several checks ask of the same Secret."""
    if name not in self._secrets:
      self._secrets[name] = self._read(f"get secret {name}",
                                       self.cluster.core.read_namespaced_secret,
                                       name, self.namespace)
    return self._secrets[name]

  def secret_keys(self, name: str) -> Optional[set]:
    """The keys of the Secret (never its values), or None when there is none."""
    found = self._secret(name)
    return None if found is None else set(found.data or {}) | set(found.string_data or {})

  def secret_annotations(self, name: str) -> Optional[Dict[str, str]]:
    """The Secret's annotations, or None when there is none."""
    found = self._secret(name)
    return None if found is None else dict(found.metadata.annotations or {})

  def secret_values(self, name: str) -> Optional[Dict[str, str]]:
    """The Secret's values, decoded, or None when there is none: for a
    check that uses them in this process (data.py), never to print."""
    import base64
    found = self._secret(name)
    if found is None:
      return None
    return {**{k: base64.b64decode(v).decode() for k, v in (found.data or {}).items()},
            **(found.string_data or {})}

  def service_account(self, name: str) -> Optional[Tuple[List[str], Dict[str, str]]]:
    """(the Secrets it lists under `secrets:`, its annotations) of the
    ServiceAccount `name`, or None when there is no such account."""
    found = self._read(f"get serviceaccount {name}",
                       self.cluster.core.read_namespaced_service_account, name, self.namespace)
    if found is None:
      return None
    return [ref.name for ref in found.secrets or []], dict(found.metadata.annotations or {})

  def custom(self, group: str, version: str, plural: str, name: str) -> Optional[Dict]:
    """A custom object of the namespace, or None: read once, as the KServe
    mode's and the predictor's checks ask of the same InferenceService."""
    key = (group, version, plural, name)
    if key not in self._customs:
      self._customs[key] = self._read(f"get {plural}.{group} {name}",
                                      self.cluster.custom.get_namespaced_custom_object,
                                      group, version, self.namespace, plural, name)
    return self._customs[key]

  def _raw(self, what: str, fn, *args) -> Optional[Dict]:
    """fn(*args) as the API server's JSON (no client models: a CRD's schema
    keeps its own field names)."""
    import json
    found = self._read(what, fn, *args, where="(cluster-scoped)", _preload_content=False)
    return None if found is None else json.loads(found.data)

  def crd(self, name: str) -> Optional[Dict]:
    """The CustomResourceDefinition `name` (cluster-scoped), or None."""
    from kubernetes import client
    api = client.ApiextensionsV1Api(self.cluster.custom.api_client)
    return self._raw(f"get customresourcedefinitions.apiextensions.k8s.io {name}",
                     api.read_custom_resource_definition, name)

  def nodes(self) -> List[Dict]:
    """Every node (cluster-scoped), as the API serves them."""
    return self._raw("list nodes", self.cluster.core.list_node)["items"]

  def serves(self, group: str, version: str, plural: str) -> bool:
    """Whether the API server serves `plural` in group/version: its
    discovery, which every user may read (as `kubectl api-resources`)."""
    found = self._read(f"get /apis/{group}/{version}",
                       self.cluster.custom.get_api_resources, group, version)
    return bool(found) and any(r.name == plural for r in found.resources or [])

  def may(self, account: str, verb: str, group: str, resource: str) -> bool:
    """Whether the namespace's service account `account` may `verb` the
    resource (a subresource as `pods/log`): a SubjectAccessReview, as
    `kubectl auth can-i VERB RESOURCE --as system:serviceaccount:NS:ACCOUNT`."""
    from kubernetes import client
    resource, _, sub = resource.partition("/")
    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=f"system:serviceaccount:{self.namespace}:{account}",
        resource_attributes=client.V1ResourceAttributes(
            namespace=self.namespace, verb=verb, group=group, resource=resource,
            subresource=sub or None)))
    answer = self._read("create subjectaccessreviews.authorization.k8s.io",
                        client.AuthorizationV1Api(self.cluster.custom.api_client)
                        .create_subject_access_review, review)
    return bool(answer and answer.status and answer.status.allowed)

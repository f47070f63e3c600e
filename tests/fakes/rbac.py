"""A STAND-IN of Kubernetes' RBAC authorizer, for kubernetes_api.py.

No cluster runs here. With `Store.rbac` on, every request is made by the
service account its bearer token names (`kubeconfig(..., account=...)`) and
is allowed as Kubernetes' RBAC allows it (kubernetes v1.31
`plugin/pkg/auth/authorizer/rbac/rbac.go` and `rbac/v1/evaluation_helpers.go`):
- a RoleBinding in the request's namespace, or a ClusterRoleBinding, names
  the account (`kind: ServiceAccount`, its name and namespace; a RoleBinding's
  subject without a namespace means the binding's own) and refers to a Role
  of that namespace or to a ClusterRole;
- one of that role's rules matches: `apiGroups`, `resources` (a subresource
  as `pods/log`), `verbs`, and `resourceNames` when set; `*` matches any;
- a ClusterRole with an `aggregationRule` holds the rules of every
  ClusterRole whose labels match one of its selectors (the
  clusterrole-aggregation controller, `pkg/controller/clusterroleaggregation`).
Kubeflow's profiles (multi-user installs) bind the profile namespace's
`default-editor` account to the ClusterRole `kubeflow-edit` with a
RoleBinding named `default-editor` (Kubeflow's multi-tenancy docs, "manual
profile creation"); `kubeflow-edit` aggregates the ClusterRoles labelled
`rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit: "true"`, as
Kubeflow Trainer's `kubeflow-platform` overlay labels its own
(kubeflow/trainer v2.2.0 `manifests/overlays/kubeflow-platform/
kubeflow-trainer-roles.yaml`). `profile` writes those two objects.

Not modelled: users and groups (only service accounts), non-resource URLs,
the escalation check on creating roles, impersonation.
"""

from typing import Dict, Iterable, List, Optional, Tuple

RBAC = "rbac.authorization.k8s.io/v1"
PLURALS = {"Role": "roles", "RoleBinding": "rolebindings", "ClusterRole": "clusterroles",
           "ClusterRoleBinding": "clusterrolebindings"}
EDIT_LABEL = "rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit"


def apply(store, documents: Iterable[dict], namespace: str) -> None:
  """`kubectl apply -n namespace -f` of RBAC documents."""
  for doc in documents:
    plural = PLURALS[doc["kind"]]
    ns = "" if plural.startswith("cluster") else namespace
    store.create((RBAC, ns, plural, doc["metadata"]["name"]), dict(doc))


def profile(store, namespace: str) -> None:
  """What Kubeflow's profile controller and install give a profile
  namespace's `default-editor`: `kubeflow-edit`, aggregated."""
  apply(store, [{"kind": "ClusterRole", "metadata": {"name": "kubeflow-edit"},
                 "aggregationRule": {"clusterRoleSelectors": [
                     {"matchLabels": {EDIT_LABEL: "true"}}]}, "rules": []}], namespace)
  apply(store, [{"kind": "RoleBinding", "metadata": {"name": "default-editor"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": "kubeflow-edit"},
                 "subjects": [{"kind": "ServiceAccount", "name": "default-editor",
                               "namespace": namespace}]}], namespace)


def _rules(store, ref: dict, namespace: str) -> List[dict]:
  if ref["kind"] == "Role":
    role = store.get((RBAC, namespace, "roles", ref["name"]))
    return (role or {}).get("rules", [])
  role = store.get((RBAC, "", "clusterroles", ref["name"]))
  if not role:
    return []
  rules = list(role.get("rules", []))
  for selector in role.get("aggregationRule", {}).get("clusterRoleSelectors", []):
    wanted = selector.get("matchLabels", {}).items()
    for other in store.list(RBAC, "", "clusterroles"):
      labels = other["metadata"].get("labels", {})
      if other["metadata"]["name"] != ref["name"] and all(
          labels.get(k) == v for k, v in wanted):
        rules += other.get("rules", [])
  return rules


def _matches(rule: dict, verb: str, group: str, resource: str, name: str) -> bool:
  def has(values, value):
    return "*" in values or value in values
  return (has(rule.get("verbs", []), verb) and has(rule.get("apiGroups", []), group)
          and has(rule.get("resources", []), resource)
          and (not rule.get("resourceNames") or name in rule["resourceNames"]))


def allowed(store, account: Tuple[str, str], verb: str, group: str, resource: str,
            namespace: str, name: str = "") -> bool:
  """Whether the service account (namespace, name) may do `verb` on
  `resource` (a subresource as `pods/log`) of `group` in `namespace`."""
  bindings = [(b, namespace) for b in store.list(RBAC, namespace, "rolebindings")]
  bindings += [(b, "") for b in store.list(RBAC, "", "clusterrolebindings")]
  for binding, ns in bindings:
    # appliesToUser: a service account subject without a namespace is the
    # RoleBinding's own namespace's; a ClusterRoleBinding's has none.
    if not any(s.get("kind") == "ServiceAccount" and s.get("name") == account[1]
               and (s.get("namespace") or ns) == account[0]
               for s in binding.get("subjects", [])):
      continue
    if any(_matches(rule, verb, group, resource, name)
           for rule in _rules(store, binding["roleRef"], ns)):
      return True
  return False


def account_of(token: Optional[str]) -> Optional[Tuple[str, str]]:
  """(namespace, name) from a stand-in token `sa:<namespace>:<name>`."""
  if token and token.startswith("sa:") and token.count(":") == 2:
    _, namespace, name = token.split(":")
    return namespace, name
  return None


def tokens(account: Tuple[str, str]) -> Dict[str, str]:
  return {"token": f"sa:{account[0]}:{account[1]}"}


# SubjectAccessReview: "may this user do this?", asked by another
# (kubernetes/kubernetes@00bdb3f pkg/registry/authorization/subjectaccessreview/
# rest.go lines 43-66, Create: the authorizer's verdict on the spec's user and attributes,
# as `status.allowed` and `status.reason`; nothing is stored). The caller
# needs `create` on `subjectaccessreviews` in `authorization.k8s.io`, which
# kubernetes_api.py asks as for any request.
SERVICE_ACCOUNT_USER = "system:serviceaccount:"


def review(store, body: dict, forbidden=frozenset()) -> dict:
  """The SubjectAccessReview `body`, answered: allowed as `allowed` allows
  the spec's service account (a user that is none is allowed nothing here),
  and never when the (verb, resource) pair is one the store forbids."""
  spec = body.get("spec", {})
  attributes = spec.get("resourceAttributes", {})
  resource = attributes.get("resource", "")
  if attributes.get("subresource"):
    resource += "/" + attributes["subresource"]
  user = spec.get("user", "")
  account = tuple(user[len(SERVICE_ACCOUNT_USER):].split(":", 1)) \
      if user.startswith(SERVICE_ACCOUNT_USER) else None
  verb = attributes.get("verb", "")
  yes = bool(account) and (verb, attributes.get("resource", "")) not in forbidden and (
      not store.rbac or allowed(store, account, verb, attributes.get("group", ""), resource,
                                attributes.get("namespace", ""), attributes.get("name", "")))
  return {**body, "status": {"allowed": yes, "reason": (
      "RBAC: allowed by a binding" if yes else "")}}

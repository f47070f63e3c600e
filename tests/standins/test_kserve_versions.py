"""tests/fakes/kserve_versions.py answers as KServe v0.15.2 and v0.20.0 do on
the deployment-mode annotation: the defaulter, the mode the controller runs
and records, and the webhook's refusal of a change, in its words (each rule
cited in the module's docstring); v0.15.2's CRD has no `spec.canary`."""

import pytest

from tests.fakes import crd_schemas, kserve, kubernetes_api
from tests.fakes.kserve_versions import MODE, RELEASES

NAMESPACE = "team-a"


def _body(mode=None) -> dict:
  annotations = {MODE: mode} if mode else {}
  return {"apiVersion": kserve.GROUP_VERSION, "kind": "InferenceService",
          "metadata": {"name": "digits", "annotations": annotations, "generation": 1},
          "spec": {"predictor": {"model": {"modelFormat": {"name": "tensorflow"},
                                           "storageUri": "/not/downloaded/"}}}}


def _recorded(version: str, mode) -> dict:
  """An InferenceService created through the defaulter with annotation
  `mode`, once the controller reconciled it."""
  store = kubernetes_api.Store({kserve.PLURAL}, kserve_version=version)
  kserve.Controller(store)
  key = (kserve.GROUP_VERSION, NAMESPACE, kserve.PLURAL, "digits")
  store.create(key, kserve.mutate(_body(mode), version))
  for hook in store.after_write:
    hook(key)
  return store.get(key)


@pytest.mark.parametrize("version, written, annotation, status", [
    ("0.15", "Knative", "Knative", "Serverless"),  # unknown: the default's
    ("0.15", "Standard", "Standard", "Serverless"),
    ("0.15", "Serverless", "Serverless", "Serverless"),
    ("0.15", None, None, "Serverless"),
    ("0.20", "Serverless", "Knative", "Knative"),  # the deprecated name, rewritten
    ("0.20", "Knative", "Knative", "Knative"),
    ("0.20", None, None, "Knative"),  # the shipped default, read as Knative
])
def test_the_defaulter_and_the_mode_the_controller_records(version, written, annotation,
                                                           status):
  found = _recorded(version, written)
  assert found["metadata"]["annotations"].get(MODE) == annotation
  assert found["status"]["deploymentMode"] == status


def test_the_deprecated_standard_name_is_rewritten_by_v0_20_only():
  assert kserve.mutate(_body("RawDeployment"), "0.20")["metadata"]["annotations"][MODE] == (
      "Standard")
  assert kserve.mutate(_body("RawDeployment"), "0.15")["metadata"]["annotations"][MODE] == (
      "RawDeployment")
  assert RELEASES["0.15"].running("", {MODE: "RawDeployment"}) == "RawDeployment"


def test_v0_15_2_refuses_the_annotation_the_status_did_not_record():
  old = _recorded("0.15", "Knative")
  again = kserve.mutate(_body("Knative"), "0.15")  # v0.15.2's defaulter keeps it
  assert kserve.problems(again, old, "0.15") == [
      "update rejected: deploymentMode cannot be changed from 'Serverless' to 'Knative'"]
  assert kserve.problems(kserve.mutate(_body("Serverless"), "0.15"), old, "0.15") == []
  assert kserve.problems(_body(), old, "0.15") == []  # no annotation: nothing compared


def test_v0_20_0_compares_after_the_defaulter_and_reads_the_status_through_the_old_names():
  old = _recorded("0.20", "Serverless")
  assert kserve.problems(kserve.mutate(_body("Serverless"), "0.20"), old, "0.20") == []
  # Without the defaulter, the annotation's own string is compared.
  assert kserve.problems(_body("Serverless"), old, "0.20") == [
      "update rejected: deploymentMode cannot be changed from 'Knative' to 'Serverless'"]
  older = {**old, "status": {"deploymentMode": "Serverless"}}  # as v0.15.2 recorded it
  assert kserve.problems(_body("Knative"), older, "0.20") == []
  assert kserve.problems(_body("Standard"), older, "0.20") == [
      "update rejected: deploymentMode cannot be changed from 'Knative' to 'Standard'"]
  # Nothing recorded yet (the first reconcile's own update): nothing compared.
  assert kserve.problems(_body("Standard"), _body(), "0.20") == []


def test_spec_canary_is_v0_20s_and_needs_standard_mode():
  body = _body("Knative")
  body["spec"]["canary"] = [{"trafficPercent": 10, "predictor": {}}]
  assert kserve.problems(body, None, "0.20") == [
      "canary is only supported in Standard deployment mode"]
  assert kserve.problems(body, None, "0.15") == []  # no such rule: the CRD refuses first
  assert crd_schemas.problems("inferenceservices", "0.15", body)["unknown"] == [
      'unknown field "spec.canary"']

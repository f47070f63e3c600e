"""serving/kserve_modes.py: the mode annotation a create and an update
write, taken to the mode asked for and never refused by the defaulter,
controller and webhook of KServe v0.15.2 and v0.20.0 (their rules as
tests/fakes/kserve_versions.py states them); a change of mode refused in
one line. On the stand-in API: tests/processes/serving/test_kserve.py."""

import pytest

from runtime import kube
from serving import kserve_modes
from tests.fakes.kserve_versions import RELEASES


@pytest.mark.parametrize("version", sorted(RELEASES))
@pytest.mark.parametrize("mode", sorted(kserve_modes.MODES))
def test_a_create_runs_in_the_mode_asked_on_every_release(version, mode):
  release = RELEASES[version]
  annotations = kserve_modes.created(mode)
  release.defaulted(annotations)
  running = release.running("", annotations)
  assert running == {"knative": release.knative, "standard": release.standard}[mode]
  # What the status then records is read back as the mode asked.
  assert kserve_modes.recorded_mode({"metadata": {}, "status": {"deploymentMode": running}}) \
      == kserve_modes.MODES[mode]


@pytest.mark.parametrize("version", sorted(RELEASES))
@pytest.mark.parametrize("annotation", ["Knative", "Serverless", "Standard", None])
def test_an_update_keeps_what_the_status_recorded_on_every_release(version, annotation):
  """Also over an annotation an older deploy wrote (`Knative` on v0.15.2)."""
  release = RELEASES[version]
  created = {kserve_modes.MODE_ANNOTATION: annotation} if annotation else {}
  release.defaulted(created)
  old = {"metadata": {"annotations": created},
         "status": {"deploymentMode": release.running("", created)}}
  update = {**created, **kserve_modes.kept(old)}
  release.defaulted(update)
  assert release.mode_change(old, update) is None


def test_nothing_is_written_before_the_controller_records_a_mode():
  assert kserve_modes.kept({"metadata": {"annotations": {}}}) == {}
  assert kserve_modes.kept({"metadata": {}, "status": {"deploymentMode": "Serverless"}}) == {
      kserve_modes.MODE_ANNOTATION: "Serverless"}


@pytest.mark.parametrize("found, mode, message", [
    ({"status": {"deploymentMode": "Serverless"}}, "standard",
     "InferenceService digits runs in Knative mode, asked for Standard: KServe refuses to "
     "change it (update rejected: deploymentMode cannot be changed); deploy with "
     "--kserve-mode knative or under another name"),
    ({"annotations": {kserve_modes.MODE_ANNOTATION: "RawDeployment"}}, "knative",
     "InferenceService digits runs in Standard mode, asked for Knative"),
    ({"status": {"deploymentMode": "ModelMesh"}}, "knative",
     "InferenceService digits runs in ModelMesh mode, asked for Knative: KServe refuses to "
     "change it (update rejected: deploymentMode cannot be changed); deploy under another "
     "name"),
])
def test_a_change_of_mode_is_refused_in_one_line(found, mode, message):
  found = {"metadata": {"annotations": found.pop("annotations", {})}, **found}
  with pytest.raises(kube.ClusterError) as refused:
    kserve_modes.refuse_change(found, "digits", mode)
  assert str(refused.value).startswith(message), str(refused.value)


def test_the_same_mode_or_none_recorded_passes():
  recorded = {"metadata": {}, "status": {"deploymentMode": "Serverless"}}
  kserve_modes.refuse_change(recorded, "digits", "knative")
  kserve_modes.refuse_change({"metadata": {"annotations": {}}}, "digits", "standard")


@pytest.mark.parametrize("found, key", [
    ({"metadata": {"name": "d"}, "status": {"deploymentMode": "RawDeployment"}}, "standard"),
    ({"metadata": {"name": "d", "annotations": {kserve_modes.MODE_ANNOTATION: "Serverless"}}},
     "knative"),
    ({"metadata": {"name": "d"}, "status": {"deploymentMode": "Knative"}}, "knative"),
    ({"metadata": {"name": "d"}}, "")])
def test_a_rollback_reads_the_mode_the_object_runs_in(found, key):
  """What `rollback --kserve` deploys in (serving/kserve_rollback.py): the
  object's own mode, by either release's names, not a flag's default."""
  assert kserve_modes.recorded_key(found) == key


def test_a_mode_not_deployed_here_is_one_line():
  found = {"metadata": {"name": "d"}, "status": {"deploymentMode": "ModelMesh"}}
  with pytest.raises(kube.ClusterError, match=r"^InferenceService d runs in ModelMesh mode: "
                                              r"expected Knative or Standard, which "
                                              r"serving/kserve.py deploys$"):
    kserve_modes.recorded_key(found)

"""serving/kserve_ready.py on InferenceService statuses as KServe v0.20.0
writes them: a new revision Ready, one the storage initializer failed
(its reason in one line), one never Ready in time, and the traffic said
from the status: 100%, a canary's share, 0% after a rollback."""

import pytest

import serving
from serving import kserve_ready


def _status(created, ready, traffic, failure=None):
  status = {"components": {"predictor": {"latestCreatedRevision": created,
                                         "latestReadyRevision": ready, "traffic": traffic}}}
  if failure:
    status["modelStatus"] = {"transitionStatus": "BlockedByFailedLoad", "lastFailureInfo": {
        "reason": "ModelLoadFailed", "message": failure}}
  return {"status": status}


def test_a_new_ready_revision_is_waited_for_past_a_stale_status():
  stale = _status("d-00001", "d-00001", [{"revisionName": "d-00001", "percent": 100}])
  fresh = _status("d-00002", "d-00002", [{"revisionName": "d-00002", "percent": 100}])
  reads = iter([stale, stale, fresh])
  found = kserve_ready.wait(lambda: next(reads), "d-00001", "d", "2", 60, sleep=lambda s: None)
  assert found is fresh
  assert kserve_ready.serving_line(found, "d", "2", "1", "knative") == (
      "kserve: InferenceService d serves version 2 (100%)")


def test_a_failed_download_is_one_line_naming_it():
  failed = _status("d-00002", "d-00001", [{"revisionName": "d-00001", "percent": 100}],
                   failure="botocore.exceptions.SSLError: SSL validation failed")
  with pytest.raises(serving.ServingError) as refused:
    kserve_ready.wait(lambda: failed, "d-00001", "d", "2", 60, sleep=lambda s: None)
  assert str(refused.value) == (
      "kserve: version 2 of InferenceService d did not get Ready (revision d-00002); its "
      "traffic stays where it was: ModelLoadFailed: botocore.exceptions.SSLError: SSL "
      "validation failed")


def test_a_revision_never_ready_fails_after_its_seconds():
  pending = _status("d-00002", "d-00001", [])
  with pytest.raises(serving.ServingError, match=r"not Ready after 0.01 s"):
    kserve_ready.wait(lambda: pending, "d-00001", "d", "2", 0.01, sleep=lambda s: None)


def test_the_share_is_read_from_the_traffic():
  canary = _status("d-00002", "d-00002", [{"revisionName": "d-00002", "percent": 10},
                                          {"revisionName": "d-00001", "percent": 90}])
  assert kserve_ready.serving_line(canary, "d", "2", "1", "knative") == (
      "kserve: version 2 is a canary at 10% of traffic; version 1 keeps 90% until `promote` "
      "or `rollback`")
  rolled_back = _status("d-00003", "d-00003", [{"revisionName": "d-00003", "percent": 0},
                                               {"revisionName": "d-00002", "percent": 100}])
  assert kserve_ready.serving_line(rolled_back, "d", "3", "2", "knative") == (
      "kserve: InferenceService d names version 3 at 0% of traffic; version 2 keeps 100%")


def test_a_storage_initializers_log_tail_is_said_by_its_last_line():
  """Its termination message is the log's tail (FallbackToLogsOnError)."""
  tail = ("INFO:root:Copying contents of s3://serving/d/2 to local\n"
          "Traceback (most recent call last):\n  File \"storage.py\", line 80\n"
          "botocore.exceptions.NoCredentialsError: Unable to locate credentials\n")
  failed = _status("d-00002", "d-00001", [{"revisionName": "d-00001", "percent": 100}],
                   failure=tail)
  with pytest.raises(serving.ServingError) as refused:
    kserve_ready.wait(lambda: failed, "d-00001", "d", "2", 60, sleep=lambda s: None)
  (line,) = str(refused.value).splitlines()
  assert line.endswith("ModelLoadFailed: botocore.exceptions.NoCredentialsError: Unable to "
                       "locate credentials"), line


def test_a_standard_update_whose_new_pod_fails_is_not_said_to_serve():
  """The rolling update keeps the old pod, so Ready stays True while the
  newest pod's model failed to load."""
  found = {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                      "modelStatus": {"transitionStatus": "BlockedByFailedLoad",
                                      "lastFailureInfo": {"reason": "ModelLoadFailed",
                                                          "message": "403 Forbidden"}}}}
  with pytest.raises(serving.ServingError, match="ModelLoadFailed: 403 Forbidden"):
    kserve_ready.wait(lambda: found, None, "d", "2", 60, sleep=lambda s: None)
  assert kserve_ready.serving_line(found, "d", "2", "1", "standard") == (
      "kserve: InferenceService d names version 2, not Ready")


def test_a_standard_update_in_progress_is_waited_for():
  loading = {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                        "modelStatus": {"transitionStatus": "InProgress"}}}
  done = {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                     "modelStatus": {"transitionStatus": "UpToDate"}}}
  reads = iter([loading, loading, done])
  assert kserve_ready.wait(lambda: next(reads), None, "d", "2", 60,
                           sleep=lambda s: None) is done

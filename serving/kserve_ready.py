"""After a deploy's patch: waiting until the new version's revision is
Ready, and saying which version takes the traffic, read from the
InferenceService's status, never from its spec alone.

What KServe v0.15.2 and v0.20.0 report (kserve/kserve, pkg/apis/serving/
v1beta1/inference_service_status.go@v0.20.0; @v0.15.2 the same fields):
- in Knative mode each spec is a revision, `status.components.predictor.
  latestCreatedRevision`; it serves once it is `latestReadyRevision`, and
  `traffic` gives each revision's percent (PropagateStatus, :567-636);
- a revision that does not get Ready: PredictorReady False with the
  Knative Service's reason and message (`RevisionFailed`, "Revision ...
  failed with message: ...", :612-622), and when the storage initializer
  failed, `modelStatus.transitionStatus` `BlockedByFailedLoad` with
  `lastFailureInfo` {reason `ModelLoadFailed`, message} (:721-787), e.g.
  the predictor's account had no S3 Secret, or HTTPS to an HTTP MinIO;
- Standard mode has no revisions: the Ready condition alone (:360-420),
  and nothing in the status names the spec it was reconciled from, so a
  read before KServe reconciled the patch may still show the version
  before as Ready: Standard mode's wait is the weaker one.
The traffic of a failed revision stays where it was, so the new version
is not said to serve.
"""

import time
from typing import Callable, Dict, Optional

import serving

DEFAULT_SECONDS = 600  # a TF Serving pod's image pull and model download


def predictor_status(found: dict) -> dict:
  return found.get("status", {}).get("components", {}).get("predictor", {})


def condition(found: dict, kind: str) -> dict:
  return next((c for c in found.get("status", {}).get("conditions", [])
               if c.get("type") == kind), {})


def last_line(message: str) -> str:
  """The line that says what went wrong: the storage initializer's message
  is its log's tail (`terminationMessagePolicy: FallbackToLogsOnError`,
  pkg/utils/storage.go@v0.20.0:322), INFO lines then a traceback whose
  last line is the error."""
  lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
  return lines[-1] if lines else ""


def failure(found: dict) -> str:
  """Why the InferenceService's latest revision is not Ready, in one line;
  "" if it is not known to have failed."""
  model = found.get("status", {}).get("modelStatus", {})
  info = model.get("lastFailureInfo") or {}
  if model.get("transitionStatus") == "BlockedByFailedLoad" and info:
    return f"{info.get('reason', 'ModelLoadFailed')}: {last_line(info.get('message'))}".strip()
  predictor = condition(found, "PredictorReady")
  if predictor.get("status") == "False" and predictor.get("reason"):
    return f"{predictor['reason']}: {last_line(predictor.get('message'))}".strip()
  return ""


def standard_ready(found: dict) -> bool:
  """Standard mode's Ready, which a rolling update keeps True on the old
  pod (maxUnavailable 25%, deployment_reconciler.go@v0.20.0:343-348): so
  also the model's status, read from the newest pod (status.go:751-779),
  up to date when KServe reports one."""
  model = found.get("status", {}).get("modelStatus", {})
  return (condition(found, "Ready").get("status") == "True"
          and model.get("transitionStatus", "UpToDate") == "UpToDate")


def _moved_on(found: dict, generation: Optional[int]) -> bool:
  seen = found.get("status", {}).get("observedGeneration")
  return generation is None or seen is None or int(seen) > int(generation)


def shares(found: dict) -> Dict[str, int]:
  """Each revision's percent of traffic."""
  out: Dict[str, int] = {}
  for entry in predictor_status(found).get("traffic", []):
    name = entry.get("revisionName", "")
    out[name] = out.get(name, 0) + int(entry.get("percent") or 0)
  return out


def wait(get: Callable[[], dict], before: Optional[str], name: str, version: str,
         seconds: float, sleep: Callable[[float], None] = time.sleep,
         generation: Optional[int] = None) -> dict:
  """The InferenceService once the revision for `version` is Ready.

  Args:
    get: reads the InferenceService.
    before: its latestCreatedRevision before the patch (a new one is the
      new version's); None in Standard mode, which has no revisions.
    seconds: how long to wait, polling with backoff.
    generation: Standard mode: `status.observedGeneration` before the patch,
      the predictor Deployment's (inference_service_status.go@v0.20.0:456,
      @v0.15.2:354), which grows once its new pod template is taken; a
      status from before (the same number) is not judged. None where the
      status gave none.

  Raises:
    serving.ServingError: the revision failed (its reason), or is not
      Ready within `seconds`.
  """
  deadline, delay = time.monotonic() + seconds, 0.1
  while True:
    found = get()
    created = predictor_status(found).get("latestCreatedRevision", "")
    current = (created and created != before) if before is not None else (
        _moved_on(found, generation))
    if current and before is not None and predictor_status(found).get(
        "latestReadyRevision") == created:
      return found
    why = failure(found) if current else ""
    if not why and current and before is None and standard_ready(found):
      return found
    if why:
      raise serving.ServingError(
          f"kserve: version {version} of InferenceService {name} did not get Ready"
          f"{f' (revision {created})' if created else ''}; its traffic stays where it was: "
          f"{why}")
    if time.monotonic() > deadline:
      ready = condition(found, "Ready")
      raise serving.ServingError(
          f"kserve: version {version} of InferenceService {name} not Ready after "
          f"{seconds:g} s (Ready {ready.get('status', 'Unknown')}"
          f"{': ' + ready['message'] if ready.get('message') else ''}); raise "
          "--kserve-ready-seconds, or see `kubectl describe inferenceservice " + name + "`")
    sleep(delay)
    delay = min(delay * 2, 5.0)


def serving_line(found: dict, name: str, version: str, rolled_out: str, mode: str) -> str:
  """What takes the traffic, from the status: `version` is the spec's."""
  if mode == "standard":
    ready = standard_ready(found) and not failure(found)
    return (f"kserve: InferenceService {name} serves version {version} (100%)" if ready
            else f"kserve: InferenceService {name} names version {version}, not Ready")
  predictor = predictor_status(found)
  created = predictor.get("latestCreatedRevision", "")
  share = shares(found)
  mine = share.get(created, 0) if predictor.get("latestReadyRevision") == created else 0
  if mine == 100:
    return f"kserve: InferenceService {name} serves version {version} (100%)"
  rest = f"version {rolled_out or '(unknown)'} keeps {100 - mine}%"
  if mine:
    return (f"kserve: version {version} is a canary at {mine}% of traffic; {rest} until "
            "`promote` or `rollback`")
  return f"kserve: InferenceService {name} names version {version} at 0% of traffic; {rest}"

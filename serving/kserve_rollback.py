"""A rollback on KServe: the serving dir's copy of the version that takes the
traffic, and the InferenceService (serving/kserve.py) pointed at it.

What takes the traffic is KServe's choice, not ours (kserve/kserve v0.20.0):
- With a canary in flight (Knative mode, `canaryTrafficPercent` set and a
  rolled-out revision recorded), 0% sends all traffic back to the latest
  ROLLED-OUT revision, whatever the spec names (reconcilers/knative/
  ksvc_reconciler.go:123, 134-153; the bookkeeping, inference_service_status.go:
  582-590). The copy is therefore of the version rolled out, which the
  deploy recorded in PREVIOUS_ANNOTATION; `--to` naming another is refused.
  The status's `latestRolledoutRevision` names a Knative revision, which
  says nothing of the serving-dir version without reading Knative's own
  objects, so the annotation is the record used.
- Otherwise (no canary, or Standard mode, which ignores the field) the
  copy is rolled out outright, as any version: `--to`, or the one before
  the newest.

The serving dir stays the record of what is served, so every refusal comes
before it changes: the InferenceService read, its recorded mode (never
assumed), the version resolved, then the very patch sent as a dry run
(`dryRun=All`: RBAC, the webhooks, which KServe declares `sideEffects:
None` in config/webhook/manifests.yaml, and strict decoding all answer;
nothing is stored). Only then is the copy pushed and the patch sent. When
the newest version already is the one wanted, or a copy of it (a second
rollback in a row, or one whose patch failed), it is reused: nothing pushed.
"""

import dataclasses
import os
from typing import List, Optional

import serving
from runtime import kube
from serving import history, kserve, kserve_modes


@dataclasses.dataclass(frozen=True)
class Plan:
  """A rollback decided, before the serving dir changes.

  Attributes:
    to: the serving-dir version the copy is of.
    reuse: the newest version, when it already is `to` or a copy of it; "".
    in_flight: a canary is in flight: its traffic returns to `to`.
    canary: the version the spec names now (the canary's, when in flight).
    mode: the InferenceService's recorded mode (a key of kserve.MODES, or "").
    kept: the mode annotation the patch writes back (kserve_modes.kept): an
      update whose annotation differs from the recorded mode is refused.
  """
  to: str
  reuse: str
  in_flight: bool
  canary: str
  mode: str
  kept: dict = dataclasses.field(default_factory=dict)


def _rolled_out(found: dict, to: Optional[str]) -> str:
  """The version a canary's traffic returns to, which `to` must name."""
  name = found["metadata"]["name"]
  canary = kserve.served_version(found)
  percent = found["spec"]["predictor"]["canaryTrafficPercent"]
  rolled = found["metadata"].get("annotations", {}).get(kserve.PREVIOUS_ANNOTATION)
  if not rolled:
    raise kube.ClusterError(
        f"InferenceService {name}: expected the annotation {kserve.PREVIOUS_ANNOTATION} "
        f"naming the version rolled out before its canary (version {canary} at {percent}%), "
        "found none; run `kserve promote` or deploy a version without a canary, then roll back")
  if to not in (None, rolled):
    raise serving.ServingError(
        f"--to {to}: expected version {rolled}, the one InferenceService {name} has rolled "
        f"out: with a canary in flight (version {canary} at {percent}%) KServe sends all "
        f"traffic back to it; roll back without --to, or run `kserve promote` first, then "
        f"roll back --to {to}")
  return rolled


def plan(deployed: kserve.KServe, serving_dir: str, to: Optional[str]) -> Plan:
  """What a rollback will do; every refusal but the dry run's (`check`).

  Raises:
    kube.ClusterError: no such InferenceService, a mode not deployed here, a
      canary without the record of what is rolled out, a call refused.
    serving.ServingError: a serving dir KServe cannot download from, `to`
      not the rolled-out version during a canary, or not a complete version.
  """
  found = deployed.found()
  mode = kserve_modes.recorded_key(found)
  kserve.refuse_local(serving_dir)
  component = found.get("status", {}).get("components", {}).get("predictor", {})
  # Only then does KServe split, and a 0% share send traffic back
  # (ksvc_reconciler.go:134); Standard mode ignores the field.
  in_flight = bool(mode != "standard" and component.get("latestRolledoutRevision")
                   and found["spec"]["predictor"].get("canaryTrafficPercent") is not None)
  if in_flight:
    to = _rolled_out(found, to)
  to = history.resolve(serving_dir, to)
  newest = serving.latest(serving_dir)
  copied = (history.rolled_back(newest) or {}).get("to")
  reuse = os.path.basename(newest) if to in (os.path.basename(newest), copied) else ""
  return Plan(to, reuse, in_flight, kserve.served_version(found), mode,
              kserve_modes.kept(found))


def change(plan_: Plan, storage_uri: str) -> dict:
  """The merge patch: the spec names `storage_uri`; at 0% during a canary
  (KServe's rollback: the traffic moves at once, while the copy's new
  revision starts its pod), else rolled out (the field removed)."""
  return {"metadata": {"annotations": plan_.kept},
          "spec": {"predictor": {"canaryTrafficPercent": 0 if plan_.in_flight else None,
                                 "model": {"storageUri": storage_uri}}}}


def roll_back(name: str, serving_dir: str, to: Optional[str],
              cluster: Optional[kube.Cluster] = None) -> List[str]:
  """Pushes a copy of the version that will take the traffic (unless the
  newest already is it) and points InferenceService `name` at it; what
  happened, one line each. Refused, in one line, before anything is pushed
  when the InferenceService, the cluster's rights or its webhooks would
  refuse the patch."""
  # The Target's mode is not used: only the object's recorded one is (plan).
  deployed = kserve.KServe(kserve.Target(name), cluster)
  decided = plan(deployed, serving_dir, to)
  # The URI differs from the copy's only by its number: what the webhooks
  # and the schema check is the same.
  deployed.patch(change(decided, os.path.join(serving_dir, kserve.STAGED, decided.to) + "/"),
                 f"roll back to {decided.to}", dry_run=True)
  copy = decided.reuse
  is_copy = f", a copy of {decided.to}," if copy != decided.to else ""
  if copy:
    lines = [f"rolled back: nothing pushed: the newest, version {copy}{is_copy} already is "
             "what the InferenceService is to name"]
  else:
    path = history.rollback(serving_dir, decided.to)
    copy, lines, is_copy = (os.path.basename(path), history.pushed_lines(path),
                            f", a copy of {decided.to},")
  deployed.patch(change(decided, kserve.stage(serving_dir, copy)), f"roll back to {decided.to}")
  if decided.in_flight and decided.canary == copy:  # a second rollback in a row
    return lines + [f"kserve: InferenceService {name} already names version {copy}{is_copy} "
                    f"at 0%: all traffic is on version {decided.to}'s revision, rolled out"]
  if decided.in_flight:
    return lines + [
        f"kserve: canary version {decided.canary} rolled back: all traffic returns at once to "
        f"version {decided.to}'s revision, rolled out before it; the spec names version "
        f"{copy}{is_copy} at 0%"]
  mode = kserve.MODES.get(decided.mode, "its recorded")
  return lines + [f"kserve: InferenceService {name} now serves version {copy}{is_copy} "
                  f"rolled out ({mode} mode)"]

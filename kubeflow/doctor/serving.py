"""KServe (compiled with `--kserve`): the cluster serves the
InferenceService API the KServeDeploy step creates (serving/kserve.py), and
an InferenceService already there runs in the mode the spec deploys in.

KServe v0.15.2 to v0.20.0 all take the annotation a create writes
(`Serverless` or `RawDeployment`), but none lets an update change the mode
an InferenceService's status recorded (serving/kserve_modes.py, the rules
and their sources): the step would fail at the end of a run that trained
and pushed, refused by KServe's webhook.
"""

from typing import List

from kubeflow.doctor import lines, predictor
from kubeflow.doctor.cluster import Reader, Unreadable
from kubeflow.doctor.needs import Needs
from serving import kserve, kserve_modes


def _mode(needs: Needs, reader: Reader) -> lines.Line:
  name = needs.kserve_target.get("name", "")
  mode = needs.kserve_target.get("mode", "knative")
  what = f"KServe's mode for InferenceService {name} ({kserve_modes.MODES[mode]})"
  try:
    found = reader.custom(kserve.GROUP, kserve.API_VERSION, kserve.PLURAL, name)
  except Unreadable as e:
    return lines.unchecked(what, str(e))
  if found is None:
    return lines.ok(f"{what} (a new one)")
  running = kserve_modes.changed_from(found, mode)
  if running is None:
    return lines.ok(what)
  flag = kserve_modes.flag_for(running)
  return lines.fail(what, f"expected the InferenceService {name} in namespace "
                          f"{reader.namespace} in {kserve_modes.MODES[mode]} mode (--kserve-mode "
                          f"{mode}), found it recorded in {running} mode, which KServe refuses "
                          f"to change (update rejected: deploymentMode cannot be changed)",
                    (f"compile with --kserve-mode {flag}, or " if flag else "compile with ")
                    + f"--kserve naming another InferenceService (or delete it: kubectl -n "
                      f"{reader.namespace} delete inferenceservice {name})")


def check(needs: Needs, reader: Reader) -> List[lines.Line]:
  if not needs.kserve:
    return []
  what = f"KServe's InferenceService API ({kserve.PLURAL}.{kserve.GROUP}/{kserve.API_VERSION})"
  if not reader.serves(kserve.GROUP, kserve.API_VERSION, kserve.PLURAL):
    return [lines.fail(what, "expected the cluster to serve it, found no such API (KServe's "
                             "CRDs are not installed)", kserve.GRANTS.missing_api)]
  account = predictor.check(needs, reader)
  return ([lines.ok(what)] + ([_mode(needs, reader)] if needs.kserve_target else [])
          + ([account] if account else []))

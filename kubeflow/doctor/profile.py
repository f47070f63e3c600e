"""A multi-user namespace's allowed prefixes: every path a run uses lies
under them (kubeflow/profile_paths.py holds the prefixes and why). Compile
holds the compiled paths to the compiled namespace; this holds them to the
namespace the run goes to, which `--namespace` may change. Reads no cluster.
"""

from typing import List

from kubeflow import profile_paths
from kubeflow.doctor import lines
from kubeflow.doctor.needs import Needs


def compiled_for(needs: Needs, found: List[lines.Line]) -> List[lines.Line]:
  """A line to put first when the store's lines `found` fail and
  `--namespace` is not the namespace the spec was compiled for: without
  it, a spec compiled for team-a and sent to `kubeflow` fails on the
  store's ConfigMap and Secret with no word of team-a. Not a failure by
  itself: on a single-user install, `kubeflow`'s keys reach every prefix."""
  compiled = needs.env.get(profile_paths.PROFILE_ENV)
  if (not compiled or compiled == needs.namespace
      or not any(line.verdict == lines.FAILED for line in found)):
    return []
  return [lines.fail(
      f"the namespace the run goes to ({needs.namespace})",
      f"the spec was compiled for namespace {compiled} (its steps read the keys of the "
      f"namespace they run in, its paths lie under {compiled}'s prefixes), and --namespace "
      f"{needs.namespace} sends it to {needs.namespace}, whose store lines fail below",
      f"run it in {compiled} (--namespace {compiled}), or compile it again with "
      f"--namespace {needs.namespace}")]


def check(needs: Needs) -> List[lines.Line]:
  """One line for the run's paths, when its steps hold a profile's keys."""
  namespace = needs.profile()
  if not namespace:
    return []
  what = (f"the run's paths within namespace {namespace}'s prefixes "
          f"({', '.join(needs.places)})")
  refused = profile_paths.outside(namespace, needs.places)
  if refused:
    # `outside` names the path, the prefixes and an example path under them.
    return [lines.fail(what, refused, f"compile with paths under "
                       f"s3://{profile_paths.BUCKET}/private/{namespace}/ (--pipeline-root, "
                       f"--data-root, --serving-dir), or run in the namespace they belong to "
                       f"(--namespace)")]
  return [lines.ok(what)]

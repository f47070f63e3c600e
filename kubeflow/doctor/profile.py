"""A multi-user namespace's allowed prefixes: every path a run uses lies
under them (kubeflow/profile_paths.py holds the prefixes and why). Compile
holds the compiled paths to the compiled namespace; this holds them to the
namespace the run goes to, which `--namespace` may change. Reads no cluster.
"""

from typing import List

from kubeflow import profile_paths
from kubeflow.doctor import lines
from kubeflow.doctor.needs import Needs


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

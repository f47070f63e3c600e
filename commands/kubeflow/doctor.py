"""`python -m commands.kubeflow doctor`: the install a spec will run on,
checked before a run (kubeflow/doctor/), one line per check.

A spec compiled for Vertex AI is checked against `--project` and
`--region` (as `submit` finds them) by kubeflow/doctor/vertex.py: the
region, the credentials, the project, the Vertex AI API, the pipeline
root's bucket and the Trainer's CustomJob machine against its GPU.

Exit status: 0 when nothing would stop the run, 1 when something would,
2 for bad input (an unreadable spec).
"""

import os
import sys
from typing import List, Optional

from commands.kubeflow import flags, runs
from kubeflow.doctor import lines


def _pipelines(args, wanted) -> List[lines.Line]:
  """The Pipelines API's lines, when an endpoint is given: reachable, and a
  multi-user install asked with a namespace (kubeflow/api/client.py
  connect); then the store its version keeps against the steps' endpoint."""
  host = args.host or os.environ.get("KF_PIPELINES_ENDPOINT")
  if not host:
    return []
  from kubeflow.api import client
  from kubeflow.doctor import store
  from kubeflow.errors import KubeflowError
  try:
    runs._connect(args)
    tag = str(client.healthz(host, args.token or runs._token_from_file()).get("tag_name", ""))
  except KubeflowError as e:  # its words name the host: not said twice
    fix = ("check --host (e.g. kubectl -n kubeflow port-forward svc/ml-pipeline-ui 8080:80), "
           "--token and --namespace")
    if "multi-user" in str(e) and not args.namespace:  # submit will need it too
      fix = f"pass --namespace {wanted.namespace}, to doctor and to submit"
    return [lines.fail("the Kubeflow Pipelines API", str(e), fix)]
  return [lines.ok(f"Kubeflow Pipelines at {host}")] + store.check_install_store(
      wanted, tag or "unknown")


def check(args, spec_path: str, before_run: bool = False,
          documents: Optional[List[dict]] = None) -> List[lines.Line]:
  """Every line for the spec at `spec_path` and the install `args` name;
  `before_run`, submit's: without the API's line (submit connects itself),
  and a cluster the kubeconfig does not reach is not checked; on Vertex AI,
  the spec's own lines only (submit connects and checks the bucket itself).
  `documents`: the spec's, when the caller has read them.

  Raises:
    argparse.ArgumentTypeError: the spec is unreadable, or --backend vertex
      with a spec not compiled for it.
  """
  from kubeflow.compile.backend import VERTEX, sent_to
  from kubeflow.doctor import checks, needs
  from kubeflow.doctor.cluster import Reader
  from runtime.kube import ClusterError
  wanted = needs.read(documents or runs.load_spec(spec_path), spec_path, args.namespace,
                      getattr(args, "pipeline_root", None))
  if sent_to(getattr(args, "backend", None), spec_path) == VERTEX:
    from kubeflow.doctor import vertex
    return vertex.check(wanted, args.project, args.region, before_run)
  found = (_pipelines(args, wanted) if not before_run else []) + checks.offline(wanted)
  try:  # no kubeconfig, or its cluster does not answer: one line, then what was found
    reader = Reader(wanted.namespace)
    found += checks.on_cluster(wanted, reader)
    if before_run:  # the store is the cluster's own, rarely reachable from here
      return found
    from kubeflow.doctor import data
    return found + data.check(wanted, reader, getattr(args, "store_endpoint", None) or "")
  except ClusterError as e:
    what = "the Kubernetes cluster"
    if before_run:  # submitting needs no kubeconfig: only the checks do
      return found + [lines.unchecked(what, str(e))]
    return found + [lines.fail(what, str(e), "point KUBECONFIG at the install's cluster "
                                             "(kubectl config use-context ...)")]


def before_submit(args) -> None:
  """The checks, before `submit` sends a run or `schedule` a schedule
  (unless --no-check): a failure goes to stderr and stops it. What was not
  checked is left to `doctor` to show: a user who submits through --host
  alone, with no kubeconfig, would otherwise read the same line each time.

  Raises:
    KubeflowError: a check failed.
  """
  from kubeflow.compile import spec as compiled
  if args.no_check:
    return
  documents = runs.load_spec(args.spec)
  if not compiled.tasks(documents[0]):
    return  # a spec of no steps of ours (a single component's): nothing to check
  from kubeflow.errors import KubeflowError
  failed = [line for line in check(args, args.spec, before_run=True, documents=documents)
            if line.verdict == lines.FAILED]
  for line in failed:
    print(line, file=sys.stderr)
  if failed:
    command = args.func.__name__.strip("_")  # _submit, _schedule
    raise KubeflowError(f"doctor: {len(failed)} check(s) failed (above), so nothing was "
                        f"sent; fix them, or {command} with --no-check")


def _doctor(args) -> int:
  found = check(args, args.spec)
  for line in found:
    print(line)
  return lines.status(found)


def add_parser(sub) -> None:
  d = sub.add_parser("doctor", help="check the install a spec will run on, before a run")
  flags.connection(d)
  d.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  d.add_argument("--store-endpoint", metavar="URL",
                 help="where this machine reaches the store the steps' S3_ENDPOINT names, "
                      "to list the data root (e.g. http://localhost:9000 through kubectl "
                      "port-forward)")
  d.set_defaults(func=_doctor)

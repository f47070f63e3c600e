"""Where a run writes, and what its steps' records there say: the root
`submit` and `schedule` send, the root the backend gives a run that sent
none (kubeflow/steps/backend.py says how the backend resolves it), and a
finished run's outcome for `runs`, and the folder that holds a pipeline's
runs for `retention`."""

import argparse
from typing import Optional

from kubeflow.errors import KubeflowError
from kubeflow.steps import backend
from kubeflow.steps import records as step_records
from runtime import run_layout, storage


def run_root(flag: str, spec: dict) -> str:
  """The root to send as the run's: `--pipeline-root`, else the compiled one.

  Raises:
    StorageError: TensorFlow cannot open it.
  """
  root = flag or spec.get("defaultPipelineRoot", "")
  storage.check_scheme(root, "--pipeline-root")
  return root


def namespace_root(namespace: str) -> str:
  """Where a run that names no root writes, as the backend's root DAG driver
  resolves it (kubeflow/steps/backend.py): the namespace's kfp-launcher
  ConfigMap's defaultPipelineRoot, else the in-cluster default. Read with
  the user's kubeconfig.

  Raises:
    KubeflowError: the ConfigMap cannot be read, in one line.
  """
  from kubernetes.client.exceptions import ApiException

  from trainer.jobs.job import ClusterError
  from trainer.jobs.kube import Cluster
  try:
    found = Cluster().core.read_namespaced_config_map(backend.CONFIG_MAP, namespace)
  except ApiException as e:
    if e.status != 404:
      raise KubeflowError(f"cannot read the {backend.CONFIG_MAP} ConfigMap of namespace "
                          f"{namespace}: HTTP {e.status} {e.reason}") from None
    found = None
  except ClusterError as e:
    raise KubeflowError(str(e)) from None
  return ((found and found.data) or {}).get("defaultPipelineRoot") or backend.DEFAULT_ROOT


def runs_folder(backend_name: str, root: str, pipeline: str,
                project: Optional[str] = None) -> Optional[run_layout.RunFolder]:
  """The folder whose sub-folders are the pipeline's runs under `root`, in
  the backend's layout (runtime/run_layout.py), as the compiled Retention
  step finds its own. On Vertex AI that is the project's folder: `project`'s
  (an id or a number), else the one project folder the root holds; None
  when it holds none.

  Raises:
    argparse.ArgumentTypeError: the root holds several projects' folders
      and no `project` says which.
    KubeflowError: the project's number cannot be read, in one line.
  """
  if backend_name != run_layout.VERTEX:
    return run_layout.of_run(backend_name, root, pipeline, "")
  root = root.rstrip("/")
  if project:
    from kubeflow.api import google_cloud, vertex
    with vertex.calls(f"reading the number of project {project}", project):
      number = google_cloud.project_number(project)
  else:
    fs = storage.gfile()
    found = run_layout.project_folders(fs.listdir(root) if fs.isdir(root) else [])
    if len(found) > 1:
      raise argparse.ArgumentTypeError(
          f"--project: expected the project whose runs to keep, found the run folders "
          f"of projects {', '.join(found)} under {root}")
    if not found:
      return None
    number = found[0]
  return run_layout.of_run(run_layout.VERTEX, root, pipeline, "", number)


FINISHED = ("SUCCEEDED", "FAILED", "CANCELED", "SKIPPED")


def outcome(run, pipeline: str, default_root) -> str:
  """What a finished run did, from its steps' records (kubeflow/steps/records.py).

  Args:
    default_root: a call that gives the root of a run that named none.
  """
  if run.state not in FINISHED:
    return ""
  root = run.runtime_config and run.runtime_config.pipeline_root
  if not root:
    try:
      root = default_root()
    except KubeflowError as e:
      return f"outcome unknown: the run named no pipeline root, and {e}; pass --pipeline-root"
  folder = run_layout.of_run(run_layout.KUBEFLOW, root, pipeline, run.run_id).run
  return outcome_at(folder, pipeline, run.run_id)


def outcome_at(folder: str, pipeline: str, run_id: str) -> str:
  """What the run in `folder` did, from its steps' records, in one line."""
  from kubeflow.api import client  # kfp: when the command runs
  from store.metadata.outcome import Outcome  # TensorFlow: when the command runs
  try:
    storage.enable([folder])
    records = step_records.read(folder)
  except Exception as e:  # noqa: BLE001  (the listing goes on without it)
    return f"outcome unknown: cannot read {folder}: {client.describe(e)}"
  if not records:
    return f"no step records under {folder}"
  verdict = Outcome(step_records.run_record(records, pipeline, run_id))
  line = verdict.push_line()
  if verdict.failed:
    line = f"failed at {verdict.failed_step}: {verdict.message}; {line}"
  return line

"""Where each backend puts a run's outputs, read back from one of them.

A compiled step knows its pipeline and task (the compiled environment) and
its own output URIs, nothing else about where its run lives. The two
backends lay a run out differently:

- Kubeflow Pipelines' open-source backend:
  `<pipeline root>/<pipeline>/<run id>/<task>/<salt>/<output>`
  (backend/src/v2 `driver/driver.go` provisionOutputs, GenerateOutputURI
  under the run context's `pipeline_root`). The pipeline's folder holds
  its runs and nothing else's.
- Vertex AI Pipelines:
  `<pipeline root>/<project number>/<job id>/<task>_<task id>/<output>`
  (TFX `orchestration/kubeflow/v2/container/kubeflow_v2_run_executor.py`,
  the comment at lines 83-84; the executor output file lies in the same
  task folder). The project's folder holds the runs of every pipeline
  that shares the root, so a run is this pipeline's only if its records
  say so (kubeflow/steps/records.py writes the pipeline into each).

What lasts across a pipeline's runs (the cache epochs, store/retention/cache_epoch.py)
lives in `<pipeline root>/<pipeline>` on both: on Vertex that folder holds
no run (a project number is all digits, a pipeline name starts with a
letter: kubeflow/compile/compiler.py check_name).
"""

import dataclasses
import re
from typing import Iterable, List, Optional, Tuple

KUBEFLOW, VERTEX = "kubeflow", "vertex"
# The compiled spec names the pipeline in every step's environment
# (kubeflow/compile/compiler.py); the layout needs it to find the run.
PIPELINE_ENV = "PIPELINE_NAME"


@dataclasses.dataclass(frozen=True)
class RunFolder:
  """A run's place in the bucket."""
  backend: str
  root: str  # the pipeline root
  runs: str  # the folder whose sub-folders are runs' folders
  run_id: str
  pipeline: str

  @property
  def run(self) -> str:
    """The run's own folder; its steps' records go in `status/` there."""
    return f"{self.runs}/{self.run_id}"

  @property
  def home(self) -> str:
    """The pipeline's folder for what lasts across its runs."""
    return f"{self.root}/{self.pipeline}"

  def writer(self, uri: str) -> Optional[Tuple[str, str]]:
    """(run id, task) of the run folder under `runs` that holds `uri`, or
    None for a URI elsewhere."""
    prefix = self.runs + "/"
    if not uri.startswith(prefix):
      return None
    run, _, rest = uri[len(prefix):].partition("/")
    folder = rest.split("/", 1)[0]
    if self.backend == VERTEX:
      folder = folder.rsplit("_", 1)[0] if "_" in folder else ""
    return (run, folder) if run and folder else None


# Where a step's container sees a bucket as files: the open-source launcher's
# LocalPathForURI (backend/src/v2/component/launcher_v2.go), and Vertex AI's
# Cloud Storage FUSE mount.
MOUNTS = {"/gcs/": "gs://", "/s3/": "s3://", "/minio/": "minio://"}


def uri_of(path: str) -> str:
  """A mounted path as the URI it stands for (the executor output file is
  handed as one, in the task's folder on Vertex AI and on the open-source
  backend from 2.15); any other path as it is."""
  for mount, scheme in MOUNTS.items():
    if path.startswith(mount):
      return scheme + path[len(mount):]
  return path


def locate(uris: Iterable[str], pipeline: str, task: str) -> Optional[RunFolder]:
  """The run folder of the first of a step's output URIs that lies in one,
  in either backend's layout; None if none does."""
  kubeflow = re.compile(rf"^(.*)/{re.escape(pipeline)}/([^/]+)/{re.escape(task)}/")
  vertex = re.compile(rf"^(.*)/(\d+)/([^/]+)/{re.escape(task)}_[^/]+/")
  for uri in uris:
    match = kubeflow.match(uri)
    if match:
      root, run = match.groups()
      return RunFolder(KUBEFLOW, root, f"{root}/{pipeline}", run, pipeline)
    match = vertex.match(uri)
    if match:
      root, project, job = match.groups()
      return RunFolder(VERTEX, root, f"{root}/{project}", job, pipeline)
  return None


def of_run(backend: str, root: str, pipeline: str, run_id: str,
           project_number: str = "") -> RunFolder:
  """A run's folder as a client names it: the run id and root from the
  backend's API, and on Vertex the project number from the job's name."""
  root = root.rstrip("/")
  runs = f"{root}/{project_number}" if backend == VERTEX else f"{root}/{pipeline}"
  return RunFolder(backend, root, runs, run_id, pipeline)


def project_folders(names: Iterable[str]) -> List[str]:
  """Of the folder names in a Vertex pipeline root, the projects' run
  folders: a project number's, all digits (a pipeline's own folder, its
  home, starts with a letter)."""
  return sorted(n for n in (name.rstrip("/") for name in names) if n.isdigit())

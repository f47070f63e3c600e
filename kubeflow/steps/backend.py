"""What the open-source backend hands every step beyond its component's own
declaration, for each of our step commands (the TFX entrypoint, the notice,
the report, retention).

- The launcher's own output. From backend 2.5 the driver adds to every
  container step an output `executor-logs` of type `system.Artifact`
  (kubeflow/pipelines `backend/src/v2/driver/driver.go`@2.5.0 line 2031,
  @2.17.0 line 761; on by default: the driver's `--publish_logs` defaults
  to "true", `cmd/driver/main.go`@2.5.0 line 85). The launcher creates the
  file at its local path before the container starts, tees the container's
  output into it and uploads it itself (`component/launcher_v2.go`
  getLogWriter, uploadOutputArtifacts); from 2.16.1 its URI carries the
  retry index (`executor-logs-0`, qualifyExecutorLogsURI). It is no output of the
  step's: a step must neither write nor report it, and TFX, which imports
  an output's type title as a class path, cannot even parse it.
- The run's root. The backend takes it from the run, else from the
  namespace's `kfp-launcher` ConfigMap, else `minio://mlpipeline/v2/artifacts`
  (`driver/root_dag.go`@2.17.0 lines 97-113; `config/env.go`@2.17.0 line 38),
  never from the compiled spec. TensorFlow opens no `minio://`, so a step
  whose outputs lie there stops before it starts, naming the fix.
- A profile's keys. On a multi-user install a step whose store keys are
  its profile namespace's (compiled with `--namespace`) may use only the
  prefixes they reach (kubeflow/profile_paths.py): the run's root, which a
  run may name at submit time, or the namespace's ConfigMap, and any path
  its parameters name (the data root, the serving dir). One outside them
  stops the step before it starts, naming the prefixes, rather than as
  AccessDenied halfway through.
"""

import os
from typing import Dict, Iterable, List, Mapping, Optional

from kubeflow import profile_paths
from runtime import storage

LOGS = "executor-logs"
DEFAULT_ROOT = "minio://mlpipeline/v2/artifacts"
CONFIG_MAP = "kfp-launcher"


def launcher_outputs(outputs: Dict) -> List[str]:
  """The output keys of an executor input's `outputs.artifacts` that the
  launcher added for itself."""
  return [key for key in outputs if key == LOGS]


def check_root(uris: Iterable[str]) -> None:
  """Raises storage.StorageError, in one line, when the run's outputs lie
  under a root TensorFlow cannot open.

  Args:
    uris: the step's output artifacts' URIs.
  """
  for uri in uris:
    found = storage.scheme(uri)
    if found and found not in storage.SCHEMES:
      why = (f"under the backend's in-cluster default root {DEFAULT_ROOT}: the run named "
             f"no pipeline root, and the namespace's {CONFIG_MAP} ConfigMap sets none"
             if uri.startswith(DEFAULT_ROOT + "/") else "under the run's pipeline root")
      raise storage.StorageError(
          f"this run writes its outputs to {uri.rsplit('/', 3)[0]}/..., {why}; "
          f"TensorFlow cannot open {found}://. Start runs with python -m commands.kubeflow "
          f"submit or schedule, which send the compiled root, or set "
          f"defaultPipelineRoot (s3://... or gs://...) in the kfp-launcher ConfigMap "
          f"of the run's namespace")


def check_run(executor_input: dict, env: Mapping[str, str] = os.environ) -> None:
  """check_root, then, for a step holding a profile's keys, every s3://
  URI it is handed: its outputs' (under the run's root), its inputs' and
  its parameters'.

  Raises:
    storage.StorageError: in one line, naming the first refused.
  """
  check_root(output_uris(executor_input))
  namespace = profile_paths.step_namespace(env)
  if not namespace:
    return
  inputs, outputs = executor_input.get("inputs", {}), executor_input.get("outputs", {})
  named = {f"the run's pipeline root: this step's output {key}": uri
           for key, uri in _artifact_uris(outputs).items()}
  named.update({f"this step's input {key}": uri for key, uri in _artifact_uris(inputs).items()})
  named.update({f"this step's parameter {name}": uri for name, uri in
                profile_paths.uris_in(inputs.get("parameterValues", {})).items()})
  refused = profile_paths.outside(namespace, named)
  if refused:
    raise storage.StorageError(refused)


def _artifact_uris(section: dict) -> Dict[str, str]:
  return {key: listed["artifacts"][0]["uri"]
          for key, listed in section.get("artifacts", {}).items()
          if listed.get("artifacts") and listed["artifacts"][0].get("uri")}


def output_uris(executor_input: dict) -> List[str]:
  """The URIs of an executor input's output artifacts, the launcher's included."""
  return [a["uri"] for listed in executor_input.get("outputs", {}).get("artifacts", {}).values()
          for a in listed.get("artifacts", []) if a.get("uri")]


def refusal(executor_input: dict) -> Optional[str]:
  """The one line a step command exits 1 with when check_run refuses what
  it is handed, else None."""
  try:
    check_run(executor_input)
  except storage.StorageError as e:
    return f"error: {e}"
  return None

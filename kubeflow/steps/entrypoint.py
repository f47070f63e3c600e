"""The command every compiled step runs in its container.

It runs TFX's KFP v2 executor (`kubeflow_v2_run_executor._run_executor`),
after the things TFX 1.16's own entrypoint does not do:

1. The process set-up (runtime/startup.py), first: TFX's entrypoint imports TFMA,
   which loads Keras, before any project code would run.
2. It accepts input artifacts as the open-source Kubeflow Pipelines backend
   hands them over (2.0 to 2.17, `backend/src/v2`): an artifact read back
   from ML Metadata (`metadata/client.go` GetOutputArtifactsByExecutionId)
   carries `type: {instanceSchema: ""}`, which TFX parses to None and fails
   on ("'NoneType' object has no attribute 'get'", tensorflow/tfx#7768).
   The type is taken instead from the component's own input definitions,
   which the compiled args carry (`--json_serialized_inputs_spec_args`).
   Its metadata is the artifact's MLMD custom properties
   (`metadata/converter.go` toRuntimeArtifact): lists and structs come back
   wrapped as `{"list": [...]}` and `{"struct": {...}}`
   (StructValueToMLMDValue), and the backend adds `display_name` and
   `store_session_info`; these are unwrapped and dropped. Typed inputs, as
   Vertex AI and the compiled spec describe them, pass through unchanged.
3. s3:// URIs: the S3 file system is loaded and every bucket the step names
   is checked before the executor starts, and the step exits with its own
   status, not tensorflow-io's abort at shutdown (runtime/storage.py).
4. Artifacts of the types the run page draws (components/ui_artifacts.py)
   are given their class: TFX would import `system.Metrics` as a module path.
   The launcher's own output (`executor-logs`, kubeflow/steps/backend.py)
   is taken out of what TFX sees: its type is no class, its file the
   launcher's. A run under a `minio://` root stops here, in one line, as
   does a path a multi-user profile's keys do not reach.
5. It records what the step did in the run's folder (kubeflow/steps/records.py,
   on either backend's layout): RUNNING with the URIs it reads and writes,
   then COMPLETE with its outputs' metadata, or FAILED with the error's
   last line, for the exit step, `python -m commands.kubeflow runs` and retention.
6. It drops the cache epoch, a parameter only there to change the step's
   cache key (store/retention/cache_epoch.py), before TFX sees the parameters.

Our entrypoint, not an edit of TFX's installed files: the image and the venv run the same code.
"""

from runtime import startup

if __name__ == "__main__":  # a step's process; importing this sets nothing up
  startup.start()  # before TFX's imports below load TensorFlow and Keras

# isort: split
import datetime
import json
import os
import sys
import time
import traceback

import yaml
from absl import app, logging
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2
from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor as tfx_entry

from components import ui_artifacts
from kubeflow.steps import backend
from kubeflow.steps import records as step_records
from runtime import storage
from runtime.progress import console
from store.retention import cache_epoch

# What the open-source backend adds to every artifact it records
# (metadata/client.go RecordArtifact); not TFX properties.
BACKEND_KEYS = ("display_name", "store_session_info")


def unwrap(value):
  """A metadata value as TFX wrote it, before StructValueToMLMDValue wrapped
  lists and structs in a one-key struct."""
  if isinstance(value, dict) and len(value) == 1:
    (key, inner), = value.items()
    if (key == "list" and isinstance(inner, list)) or (
        key == "struct" and isinstance(inner, dict)):
      return inner
  return value


def type_inputs(executor_input: pipeline_spec_pb2.ExecutorInput,
                inputs_spec: pipeline_spec_pb2.ComponentInputsSpec) -> None:
  """Gives every untyped input artifact its declared type, and its metadata
  the shape TFX wrote it in; in place.

  Raises:
    ValueError: an untyped input that the component does not declare.
  """
  for key, listed in executor_input.inputs.artifacts.items():
    for artifact in listed.artifacts:
      kind = artifact.type.WhichOneof("kind")
      if not kind or (kind == "instance_schema" and not artifact.type.instance_schema.strip()):
        if key not in inputs_spec.artifacts:
          raise ValueError(f"input artifact {key!r} arrived without a type, and "
                           f"the component declares no input of that name "
                           f"(declared: {', '.join(inputs_spec.artifacts) or 'none'})")
        artifact.type.CopyFrom(inputs_spec.artifacts[key].artifact_type)
      fields = json_format.MessageToDict(artifact.metadata)
      cleaned = {k: unwrap(v) for k, v in fields.items() if k not in BACKEND_KEYS}
      if cleaned != fields:
        artifact.metadata.Clear()
        artifact.metadata.update(cleaned)


def _title(artifact_type) -> str:
  kind = artifact_type.WhichOneof("kind")
  if kind == "schema_title":
    return artifact_type.schema_title
  if kind == "instance_schema" and artifact_type.instance_schema.strip():
    return (yaml.safe_load(artifact_type.instance_schema) or {}).get("title", "")
  return ""


def name_run_page_types(executor_input: pipeline_spec_pb2.ExecutorInput) -> None:
  """Gives artifacts of the run page's types (`system.Metrics`, ...) their
  class's path as the title, in place: TFX's entrypoint imports a custom
  type's title as a class path (`_retrieve_class_path`), and `system` is no
  module. What the backend records keeps the compiled title."""
  for listed in [*executor_input.inputs.artifacts.values(),
                 *executor_input.outputs.artifacts.values()]:
    for artifact in listed.artifacts:
      path = ui_artifacts.CLASS_PATHS.get(_title(artifact.type))
      if path:
        artifact.type.Clear()
        artifact.type.schema_title = path


def drop_launcher_outputs(executor_input: pipeline_spec_pb2.ExecutorInput) -> None:
  """Takes the launcher's own outputs out of what TFX sees, in place."""
  for key in backend.launcher_outputs(executor_input.outputs.artifacts):
    del executor_input.outputs.artifacts[key]


def prepare(args) -> None:
  """Rewrites the parsed `--json_serialized_invocation_args`: typed inputs,
  the run page's types as classes, no launcher's outputs."""
  executor_input = pipeline_spec_pb2.ExecutorInput()
  json_format.Parse(args.json_serialized_invocation_args, executor_input,
                    ignore_unknown_fields=True)
  if getattr(args, "json_serialized_inputs_spec_args", None):
    inputs_spec = pipeline_spec_pb2.ComponentInputsSpec()
    json_format.Parse(args.json_serialized_inputs_spec_args, inputs_spec,
                      ignore_unknown_fields=True)
    type_inputs(executor_input, inputs_spec)
  drop_launcher_outputs(executor_input)
  name_run_page_types(executor_input)
  if cache_epoch.PARAMETER in executor_input.inputs.parameter_values:
    del executor_input.inputs.parameter_values[cache_epoch.PARAMETER]
  args.json_serialized_invocation_args = json_format.MessageToJson(executor_input)


class Recorder:
  """Writes this step's record; a record that cannot be written is logged,
  never the step's failure."""

  def __init__(self, invocation_json: str):
    self.task, self.retries = (os.environ.get(step_records.TASK_ENV),
                               int(os.environ.get(step_records.RETRIES_ENV) or 0))
    self.started = datetime.datetime.now(datetime.timezone.utc).isoformat()
    self.folder, self.invocation, self.uris, self.attempt = None, {}, {}, None
    try:
      self.invocation = json.loads(invocation_json)
      self.uris = step_records.artifact_uris(self.invocation)
      found = self.task and step_records.run_of(self.invocation, self.task)
      self.folder = found and found.run
    except (ValueError, KeyError, TypeError) as e:
      logging.warning("no step record: cannot read the executor input: %s", e)

  def __call__(self, state: str, **fields) -> None:
    if not self.folder:
      return
    try:
      if self.attempt is None:  # an earlier attempt's record, if any
        previous = step_records.read_one(self.folder, self.task) or {}
        self.attempt = previous.get("attempt", 0) + 1
      step_records.write(self.folder, self.task, state, started=self.started,
                        attempt=self.attempt, retries=self.retries, **self.uris, **fields)
    except Exception as e:  # noqa: BLE001  (a record is no reason to fail a step)
      logging.warning("could not write this step's record under %s: %s", self.folder, e)

  def outputs(self) -> dict:
    """What the executor reported: outputs' URIs and metadata, parameters."""
    path = self.invocation.get("outputs", {}).get("outputFile")
    try:  # a local path: the pod's own, or on the bucket's mount (/gcs/ on Vertex AI)
      with storage.gfile().GFile(path) as f:
        reported = json.load(f)
    except Exception:  # noqa: BLE001  (none written, or unreadable: no outputs reported)
      reported = {}
    declared = dict(self.invocation.get("outputs", {}).get("artifacts", {}))
    for key in backend.launcher_outputs(declared):
      del declared[key]
    artifacts = {key: (reported.get("artifacts", {}).get(key) or listed)["artifacts"][0]
                 for key, listed in declared.items()}
    return {"outputs": {k: {"uri": a.get("uri"), "metadata": a.get("metadata", {})}
                        for k, a in artifacts.items()},
            "parameters": reported.get("parameterValues", {}),
            "inputs": self.invocation.get("inputs", {}).get("parameterValues", {})}


def _last_line(e: BaseException) -> str:
  text = str(e).strip().splitlines()
  return f"{type(e).__name__}: {text[-1]}" if text else type(e).__name__


def beam_args_of(parsed, argv0: str) -> list:
  """The step's Beam arguments, without the program's own path.

  TFX's flags parser is handed the whole argv by absl and keeps what it does
  not know as Beam arguments, argv[0] included; a non-empty list makes TFX
  build an sdist of itself in every Beam step ("Creating temporary sdist
  package", `dependency_utils.make_beam_dependency_flags`), for workers
  that here run the image, which has TFX installed.
  """
  return [a for a in parsed[1] if a != argv0]


def run(parsed) -> int:
  """Runs one step; returns its exit status."""
  args, beam_args = parsed[0], beam_args_of(parsed, sys.argv[0])
  record = Recorder(args.json_serialized_invocation_args)
  try:
    backend.check_run(record.invocation)  # before any record
    storage.check([args.json_serialized_invocation_args], "this step's ")
    record(step_records.RUNNING)
    prepare(args)
    # A line a minute in the step's log while a long step runs quiet.
    clock = console.Clock(record.task or "step", time.monotonic())
    try:
      tfx_entry._run_executor(args, beam_args)
    finally:
      clock.stop()
  except storage.StorageError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  except Exception as e:  # noqa: BLE001  (the step failed: its traceback, then exit 1)
    traceback.print_exc()
    record(step_records.FAILED, message=_last_line(e))
    return 1
  record(step_records.COMPLETE, **record.outputs())
  logging.info("step finished; its outputs are written")
  return 0


def main(parsed) -> None:
  storage.exit(run(parsed))


if __name__ == "__main__":
  app.run(main, flags_parser=tfx_entry._parse_flags)

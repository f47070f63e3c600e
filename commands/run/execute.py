"""A local run, start to end: prepared, run with TFX's LocalDagRunner and
the progress lines, its report written, its verdict printed.

    status, ran = run(args, bundled)   # local_runner.py

Exit status, as local_runner.py documents it: 0 pushed (or a partial run
without the Pusher finished, or no new data); 1 stopped on anomalies or
drift, not blessed, refused at the push, another run holds the folder; 2
the declaration or the configuration is invalid (nothing run or written).
"""

import dataclasses
import sys
import traceback
from typing import Optional, Tuple

from runtime import storage
from runtime.progress import steps as progress


@dataclasses.dataclass(frozen=True)
class Ran:
  """Where a finished run left what retention reads."""
  metadata_path: str
  pipeline_name: str
  pipeline_root: str
  serving_dir: str


def execute(pipeline, run_options, metadata_path: str) -> Optional[int]:
  """Runs the pipeline with progress lines, then writes the report; 1 if a
  component failed (its error printed), None otherwise."""
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner

  from pipeline.data_components import GATE_STOPS
  from store.metadata import store as st
  from store.report import write_report
  name = pipeline.pipeline_info.pipeline_name

  def state_of(node: str) -> str:
    execution = st.latest_execution(st.open_store(metadata_path), name, node)
    return st.STATE.Name(execution.last_known_state) if execution else "?"

  status = None
  try:
    with progress.Progress(state_of):
      LocalDagRunner().run(pipeline, run_options=run_options)
  except GATE_STOPS as e:
    from store.metadata import outcome  # ServedScore ran before the gates
    served = outcome.read_outcome(metadata_path, name).served_score.get("line")
    if served:
      print(served)
    print(f"error: {e}\nno model pushed", file=sys.stderr)
    status = 1
  except Exception as e:  # noqa: BLE001  (a component failed: its error in full, then the report)
    traceback.print_exc()
    print(f"error: {_failure(metadata_path, name, e)}\nno model pushed", file=sys.stderr)
    status = 1
  upstream = {c.id: [u.id for u in c.upstream_nodes] for c in pipeline.components}
  print(f"report: {write_report(metadata_path, name, upstream)}")
  return status


def _failure(metadata_path: str, name: str, error: Exception) -> str:
  """The line that ends a failed run's traceback: which step, and why."""
  from store.metadata import outcome
  found = outcome.read_outcome(metadata_path, name)
  lines = str(error).strip().splitlines() or [type(error).__name__]
  step = f"{found.failed_step} failed" if found.failed_step else "the run failed"
  return f"{step}: {type(error).__name__}: {lines[0][:300]}"


def run(args, bundled: str) -> Tuple[int, Optional[Ran]]:
  """Checks the declaration, runs the pipeline, prints and reports the
  outcome; (exit status, where it ran, or None when it did not finish)."""
  import os

  from commands.run.flags import load_declaration
  from dataset import check, declaration
  try:
    check.check_local(load_declaration(args))  # before TensorFlow: answers in a second
  except declaration.DeclarationError as e:
    for line in str(e).splitlines():
      print(f"error: {line}", file=sys.stderr)
    return 2, None

  from tfx.orchestration import metadata as tfx_metadata

  from commands.run import partial_run
  from commands.run.preparation import prepare_local
  from pipeline.config import ConfigError
  from pipeline.pipeline import create_pipeline
  from store import run_lock
  from store.metadata import outcome

  try:
    config, inputs, home = prepare_local(args, bundled=bundled)
  except (declaration.DeclarationError, ConfigError, storage.StorageError) as e:
    run_lock.release()
    for line in str(e).splitlines():  # one per bad entry
      print(f"error: {line}", file=sys.stderr)
    return 2, None
  except run_lock.RunInProgress as e:
    print(f"error: {e}", file=sys.stderr)
    return 1, None
  metadata_path = os.path.join(home, "metadata.sqlite")
  pipeline = create_pipeline(config, inputs,
                             tfx_metadata.sqlite_metadata_connection_config(metadata_path))
  try:
    run_options, rerun = partial_run.plan(pipeline, args.from_node, args.to_node,
                                          metadata_path)
  except partial_run.PartialRunError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2, None
  for node in rerun:
    print(f"note: partial run: {node} runs again, its live state moved since it last ran")
  status = execute(pipeline, run_options, metadata_path)
  if status is not None:
    return status, None
  text, status = outcome.verdict(metadata_path, config.pipeline_name, config.serving_dir,
                                 inputs.window.describe(), partial=bool(run_options))
  print(text)
  return status, Ran(metadata_path, config.pipeline_name, config.pipeline_root,
                     config.serving_dir)

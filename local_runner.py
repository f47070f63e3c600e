"""Runs the pipeline on this machine with TFX's LocalDagRunner.

    python local_runner.py                         # the bundled digits
    python local_runner.py --dataset my.yaml       # your own TFRecords

Before anything runs, the declaration is checked against its format and
against the first records of the data; a mismatch stops here, with nothing
written. Then every component runs in this process, one after the other, and
the run prints one line per component as it finishes, the path of the run's
HTML report, whether the model was blessed and why, and, last,
`pushed model: <directory>`. `-v` shows every library's logs as well.

A partial run (--from-node / --to-node) runs part of the DAG; the nodes
before it take their inputs from the previous run.

Exit status: 0 when a model was pushed (or a partial run without the Pusher
finished), or when there was no new data (every component came from the
cache: the output says `no new data`); 1 when the run stopped on data
anomalies, the model was not blessed, another run pushed after this one
judged its model, or another run of the pipeline is in progress in the same
folder (the output says why, and the served model stays as it was); 2 when the declaration or the configuration is
invalid (nothing was run or written).

Outputs, under --output-dir (default `runs/`):
  <pipeline>/pipeline_root/   every component's artifacts (or --pipeline-root)
  <pipeline>/metadata.sqlite  the ML Metadata store
  <pipeline>/serving/<version>/  the pushed SavedModels (or --serving-dir)
  <pipeline>/reports/<run>.html  each run's report (python -m debug report)

The data root, --pipeline-root and --serving-dir may be gs:// or s3:// URIs
(s3:// reads its endpoint and credentials from the environment: storage/).
"""

import argparse
import dataclasses
import os
import sys
import traceback
from typing import List, Optional

# Only light imports up here: the process is set up before TensorFlow
# loads (startup/), so `main` imports the rest.
import startup
import storage
from pipeline import flags, logs

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "datasets", "digits.yaml")


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="local_runner.py", description=__doc__.split("\n")[0])
  flags.add_pipeline_flags(parser, default_dataset=DIGITS)
  parser.add_argument("--output-dir", default=os.path.join(HERE, "runs"),
                      help="where artifacts, metadata and pushed models go")
  parser.add_argument("--pipeline-root", metavar="URI",
                      help="where artifacts go (default: OUTPUT_DIR/PIPELINE/pipeline_root)")
  parser.add_argument("--serving-dir", metavar="URI",
                      help="where blessed models are pushed (default: "
                           "OUTPUT_DIR/PIPELINE/serving)")
  parser.add_argument("--from-node", action="append", metavar="NODE",
                      help="partial run: start at this component (repeatable); "
                           "what it needs comes from the previous run")
  parser.add_argument("--to-node", action="append", metavar="NODE",
                      help="partial run: stop after this component (repeatable)")
  parser.add_argument("-v", "--verbose", action="store_true",
                      help="show every library's logs (TFX, Beam, TensorFlow)")
  return parser


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  return build_parser().parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  args.command = " ".join(["local_runner.py", *(sys.argv[1:] if argv is None else argv)])
  startup.start(quiet=not args.verbose)
  # TFX's Beam executors parse sys.argv with absl, which would read our `-v`
  # as its own --verbosity and swallow the next argument: they get none.
  sys.argv = sys.argv[:1]
  return run(args)


def write_bundled_data(args: argparse.Namespace, decl) -> None:
  """Writes the bundled digits' records on their first run."""
  from convert import digits
  if (os.path.abspath(args.dataset) == DIGITS and not storage.scheme(decl.data.root)
      and not os.path.isdir(decl.data.root)):
    digits.write_digits(decl.data.root)


def prepare(args: argparse.Namespace):
  """The run's configuration and inputs, checked: locations, the spans, the
  served version, the training key (once, now) and the first records.

  Returns:
    (config, inputs, home folder).

  Raises:
    DeclarationError, ConfigError, StorageError: bad input, one line each.
  """
  from dataset import check
  from pipeline import run_lock
  from pipeline.inputs import resolve_inputs

  decl = flags.load_declaration(args)
  home = os.path.join(os.path.abspath(args.output_dir), flags.pipeline_name(args, decl))
  run_lock.hold(home, flags.pipeline_name(args, decl), args.command)
  config = flags.pipeline_config(
      args, decl, pipeline_root=args.pipeline_root or os.path.join(home, "pipeline_root"),
      serving_dir=args.serving_dir or os.path.join(home, "serving"))
  locations = {"data.root": decl.data.root, "--pipeline-root": config.pipeline_root,
               "--serving-dir": config.serving_dir}
  for flag, uri in locations.items():
    storage.check_scheme(uri, flag)
  storage.check(locations.values())
  write_bundled_data(args, decl)
  inputs = resolve_inputs(config, os.path.join(home, "metadata.sqlite"))
  for note in inputs.window.notes:
    print(f"note: {note}")
  if inputs.tuning_why:
    print(f"note: tuning: {inputs.tuning_why}")
  files = check.data_files(decl, inputs.window)  # listed once, for both
  check.check_records(decl, inputs.window, files=files)
  if args.beam_args is None:
    config = _choose_beam_args(config, files, inputs.window)
  return config, inputs, home


def _choose_beam_args(config, files, window):
  """The config with Beam's local mode chosen by the size of the newest
  span's `files` (split -> paths) times the spans in the window
  (components/local_beam.py), said in a note when it is not the default."""
  import tensorflow as tf

  from components.local_beam import local_beam_args
  newest = sum(tf.io.gfile.stat(f).length for paths in files.values() for f in paths)
  input_mb = newest * max(1, len(window.spans)) / 2**20
  beam_args = local_beam_args(input_mb)
  if beam_args:
    print(f"note: {input_mb:.0f} MB of records: Beam runs the data components in "
          f"{beam_args[-1].split('=')[1]} worker processes ({' '.join(beam_args)}; "
          f"--beam-args to choose)")
  return dataclasses.replace(config, beam_args=beam_args)


def execute(pipeline, run_options, metadata_path: str) -> Optional[int]:
  """Runs the pipeline with progress lines, then writes the report.

  Returns:
    1 if a component failed (its error printed), None otherwise.
  """
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner

  from components.anomalies_gate import AnomaliesFound
  from components.drift_gate import DriftFound
  from debug.report import write_report
  from metadata import store as st
  name = pipeline.pipeline_info.pipeline_name

  def state_of(node: str) -> str:
    execution = st.latest_execution(st.open_store(metadata_path), name, node)
    return st.STATE.Name(execution.last_known_state) if execution else "?"

  status = None
  try:
    with logs.Progress(state_of):
      LocalDagRunner().run(pipeline, run_options=run_options)
  except (AnomaliesFound, DriftFound) as e:
    print(f"error: {e}\nno model pushed", file=sys.stderr)
    status = 1
  except Exception:  # noqa: BLE001  (a component failed: its error in full, then the report)
    traceback.print_exc()
    status = 1
  upstream = {c.id: [u.id for u in c.upstream_nodes] for c in pipeline.components}
  print(f"report: {write_report(metadata_path, name, upstream)}")
  return status


def verdict(config, inputs, metadata_path: str, partial: bool) -> int:
  """Prints what the run decided; 0 when it pushed, or had nothing to push."""
  import serving
  from debug import outcome
  result = outcome.read_outcome(metadata_path, config.pipeline_name)
  if result.states and set(result.states.values()) == {"CACHED"} and not partial:
    # A scheduled run with nothing new: not a failure, whatever the last
    # real run decided.
    served = serving.latest(config.serving_dir)
    print(f"no new data: {inputs.window.describe()} already went through this pipeline; "
          f"every component came from the cache\n"
          f"served model: {served or 'none'}")
    return 0
  print(result.summary())
  return 0 if result.pushed_dir or "Pusher" not in result.states else 1


def run(args: argparse.Namespace) -> int:
  """Checks the declaration, runs the pipeline, prints and reports the outcome."""
  from tfx.orchestration import metadata as tfx_metadata

  from components.tuner import WORKERS_ENV
  from dataset import declaration
  from pipeline import partial_run, run_lock
  from pipeline.config import ConfigError
  from pipeline.pipeline import create_pipeline

  try:
    config, inputs, home = prepare(args)
  except (declaration.DeclarationError, ConfigError, storage.StorageError) as e:
    run_lock.release()
    for line in str(e).splitlines():  # one per bad entry
      print(f"error: {line}", file=sys.stderr)
    return 2
  except run_lock.RunInProgress as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  metadata_path = os.path.join(home, "metadata.sqlite")
  os.environ[WORKERS_ENV] = str(config.tune_workers)  # not in the cache key
  pipeline = create_pipeline(
      config, inputs,
      tfx_metadata.sqlite_metadata_connection_config(metadata_path))
  try:
    run_options, rerun = partial_run.plan(pipeline, args.from_node, args.to_node,
                                          metadata_path)
  except partial_run.PartialRunError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  for node in rerun:
    print(f"note: partial run: {node} runs again, its live state moved since it last ran")
  status = execute(pipeline, run_options, metadata_path)
  if status is not None:
    return status
  return verdict(config, inputs, metadata_path, partial=bool(run_options))


if __name__ == "__main__":
  storage.exit(main())

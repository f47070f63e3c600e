"""Runs the pipeline on this machine with TFX's LocalDagRunner.

    python local_runner.py                         # the bundled digits
    python local_runner.py --dataset my.yaml       # your own TFRecords

Before anything runs, the declaration is checked against its format and
against the first records of the data; a mismatch stops here, with nothing
written. Then every component runs in this process, one after the other, and
the run ends by printing `pushed model: <directory>`.

A partial run (--from-node / --to-node) runs part of the DAG; the nodes
before it take their inputs from the previous run.

Exit status: 0 when a model was pushed (or a partial run without the Pusher
finished); 1 when the run stopped on data
anomalies or the model was not blessed (the output says why); 2 when the
declaration or the configuration is invalid (nothing was run or written).

Outputs, under --output-dir (default `runs/`):
  <pipeline>/pipeline_root/   every component's artifacts
  <pipeline>/metadata.sqlite  the ML Metadata store
  <pipeline>/serving/<version>/  the pushed SavedModels
"""

import argparse
import os
import sys
from typing import List, Optional

# The Keras choice must come before anything imports TensorFlow's Keras (TFMA
# does, at import): keep `components` first, apart from the sorted imports.
import components  # noqa: F401

# isort: split
from tfx import v1 as tfx
from tfx.orchestration.pipeline import RunOptions

from components.anomalies_gate import AnomaliesFound
from dataset import check, declaration, digits
from pipeline import flags, outcome
from pipeline.config import ConfigError
from pipeline.pipeline import create_pipeline

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "datasets", "digits.yaml")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  flags.add_pipeline_flags(parser, default_dataset=DIGITS)
  parser.add_argument("--output-dir", default=os.path.join(HERE, "runs"),
                      help="where artifacts, metadata and pushed models go")
  parser.add_argument("--from-node", action="append", metavar="NODE",
                      help="partial run: start at this component (repeatable); "
                           "what it needs comes from the previous run")
  parser.add_argument("--to-node", action="append", metavar="NODE",
                      help="partial run: stop after this component (repeatable)")
  return parser.parse_args(argv)


def load_dataset(args: argparse.Namespace) -> declaration.Declaration:
  """Loads and checks a declaration; writes the bundled digits if needed."""
  decl = flags.load_declaration(args)
  if os.path.abspath(args.dataset) == DIGITS and not os.path.isdir(decl.data.root):
    digits.write_digits(decl.data.root)
  check.check_records(decl)
  return decl


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  try:
    decl = load_dataset(args)
    name = flags.pipeline_name(args, decl)
    home = os.path.join(os.path.abspath(args.output_dir), name)
    config = flags.pipeline_config(
        args, decl, pipeline_root=os.path.join(home, "pipeline_root"),
        serving_dir=os.path.join(home, "serving"))
  except (declaration.DeclarationError, ConfigError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  metadata_path = os.path.join(home, "metadata.sqlite")
  pipeline = create_pipeline(
      config, tfx.orchestration.metadata.sqlite_metadata_connection_config(metadata_path))
  try:
    run_options = partial_run(pipeline, args.from_node, args.to_node)
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  try:
    tfx.orchestration.LocalDagRunner().run(pipeline, run_options=run_options)
  except AnomaliesFound as e:
    print(f"error: {e}\nno model pushed", file=sys.stderr)
    return 1
  except LookupError as e:
    # TFX's partial run found no earlier run of a node it must reuse.
    print(f"error: partial run: {e} Run the whole pipeline once first.", file=sys.stderr)
    return 2
  result = outcome.read_outcome(metadata_path, name)
  print(result.summary())
  return 0 if result.pushed_dir or "Pusher" not in result.states else 1


def partial_run(pipeline, from_nodes, to_nodes) -> Optional[RunOptions]:
  """RunOptions for a partial run, or None for a whole one.

  Raises:
    ValueError: naming an unknown node and the pipeline's nodes.
  """
  if not (from_nodes or to_nodes):
    return None
  ids = [c.id for c in pipeline.components]
  for flag, nodes in (("--from-node", from_nodes), ("--to-node", to_nodes)):
    for node in nodes or ():
      if node not in ids:
        raise ValueError(f"{flag}: expected one of {', '.join(ids)}, found {node!r}")
  return RunOptions(from_nodes=from_nodes, to_nodes=to_nodes)


if __name__ == "__main__":
  sys.exit(main())

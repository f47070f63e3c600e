"""Runs the pipeline on this machine with TFX's LocalDagRunner.

    python local_runner.py                         # the bundled digits
    python local_runner.py --dataset my.yaml       # your own TFRecords

The run is prepared first (commands/run/preparation.py: the declaration, the
locations, the first records; a mismatch stops there, nothing written).
Then every component runs in this process, and the run prints a line per
component, the path of its HTML report, whether the model was blessed and
why, and, last, `pushed model: <directory>`. `-v` shows every library's logs.
A partial run (--from-node / --to-node) runs part of the DAG.

Exit status: 0 when a model was pushed (or a partial run without the Pusher
finished), or there was no new data (all from the cache: `no new data`); 1
when the run stopped on data anomalies, the model was not blessed, another
run pushed after this one judged its model, or another run of the pipeline
holds the folder (the output says why; the served model stays); 2 when the
declaration or the configuration is invalid (nothing run or written).

Outputs, under --output-dir (default `runs/`):
  <pipeline>/pipeline_root/   every component's artifacts (or --pipeline-root)
  <pipeline>/metadata.sqlite  the ML Metadata store
  <pipeline>/serving/<version>/  the pushed SavedModels (or --serving-dir)
  <pipeline>/reports/<run>.html  each run's report (python -m commands.debug report)

The data root, --pipeline-root and --serving-dir may be gs:// or s3:// URIs
(s3:// reads its endpoint and credentials from the environment: runtime/).
"""

import argparse
import os
import sys
from typing import List, Optional

from commands.run import flags
from commands.run.flags import keep_count

# Only light imports up here: the process is set up before TensorFlow
# loads (runtime/startup.py), so `main` imports the rest.
from runtime import startup, storage

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "dataset", "examples", "digits.yaml")


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="local_runner.py", description=__doc__.split("\n")[0])
  flags.add_pipeline_flags(parser, default_dataset=DIGITS)
  parser.add_argument("--output-dir", default=os.path.join(HERE, "runs"),
                      help="where artifacts, metadata and pushed models go")
  parser.add_argument("--pipeline-root", metavar="URI",
                      help="where artifacts go (default: OUTPUT_DIR/PIPELINE/pipeline_root)")
  parser.add_argument("--serving-dir", metavar="URI",
                      help="where blessed models go (default: OUTPUT_DIR/PIPELINE/serving)")
  parser.add_argument("--from-node", action="append", metavar="NODE",
                      help="partial run: start at this component (repeatable); "
                           "what it needs comes from the previous run")
  parser.add_argument("--to-node", action="append", metavar="NODE",
                      help="partial run: stop after this component (repeatable)")
  parser.add_argument("--keep-runs", type=keep_count, metavar="N",
                      help="after the run, delete the artifacts only runs older than "
                           "the newest N used (python -m commands.retention; default: keep all)")
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


def run(args: argparse.Namespace) -> int:
  """Runs the pipeline here (commands/run/execute.py), then, with --keep-runs,
  retention over this pipeline's runs."""
  from commands.run import execute
  status, ran = execute.run(args, bundled=DIGITS)
  if ran and args.keep_runs:
    from store.retention.apply import apply
    summary, _ = apply(ran.metadata_path, ran.pipeline_name, args.keep_runs,
                       ran.pipeline_root, ran.serving_dir, delete=True)
    print(f"retention: {summary}")
  return status


if __name__ == "__main__":
  storage.exit(main())

"""`python -m commands.debug runs|artifacts|lineage|report|skew`: read what runs did.

Each command reads `<output-dir>/<pipeline>/metadata.sqlite` (or the file
given with --metadata), read-only. Exit status 2, with one line naming the
file, when it is missing, is not an ML Metadata store, or holds no runs of
the pipeline asked for. `skew` exits 1 when a feature is skewed. A
serving dir's versions, and a rollback, are `python -m commands.serving`
(commands/serving/cli.py): they need no store.
"""

import argparse
import os
import sys
from typing import List, Optional

from commands.run import flags
from runtime import startup

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m commands.debug", description=__doc__.split("\n")[0])
  common = argparse.ArgumentParser(add_help=False)
  flags.add_home_flags(common, os.path.join(HERE, "runs"), default_pipeline=None)
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser("runs", parents=[common],
                      help="each run: id, start, what it did (pushed, not pushed and why, "
                           "failed at which step); each component's state and duration")
  artifacts = commands.add_parser("artifacts", parents=[common],
                                  help="a run's input and output artifacts")
  artifacts.add_argument("--run", help="run id or a unique prefix (default: the latest)")
  artifacts.add_argument("--node", help="only this component")
  lineage = commands.add_parser("lineage", parents=[common],
                                help="what produced a pushed model")
  lineage.add_argument("--model", help="a pushed version or directory (default: the latest)")
  report = commands.add_parser("report", parents=[common],
                               help="write a run's HTML report (again)")
  report.add_argument("--run", help="run id or a unique prefix (default: the latest)")
  report.add_argument("--out", help="where to write it (default: <pipeline dir>/reports/)")
  skew = commands.add_parser("skew", parents=[common],
                             help="served requests against a run's training statistics: "
                                  "which features are skewed")
  skew.add_argument("--examples", required=True, metavar="FILE",
                    help="TFRecords of tf.train.Example with the raw features, as served")
  skew.add_argument("--run", help="run id or a unique prefix (default: the latest)")
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  startup.start(quiet=True)
  from store.metadata import store as st
  try:
    path = args.metadata or _home(args.output_dir, args.pipeline)
    store = st.open_store(path)
    args.pipeline = args.pipeline or _only_pipeline(path, st.pipeline_names(store))
    st.check_pipeline(store, path, args.pipeline)
    if args.command == "skew":
      from commands.debug.skew import skew_lines
      lines, skewed = skew_lines(store, args.pipeline, args.run, args.examples)
    else:
      lines, skewed = COMMANDS[args.command](store, path, args), False
  except st.StoreError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 1 if skewed else 0


def _home(output_dir: str, pipeline: Optional[str]) -> str:
  """The metadata file of `pipeline` under a local runner's --output-dir,
  where each pipeline's folder holds its own; without --pipeline, the only
  one there.

  Raises:
    StoreError: the folder holds other pipelines than the one asked for, or
      several and none was named: names them. With none there at all, the
      bundled `digits` is looked for (and open_store says it is missing).
  """
  from store.metadata import store as st
  names = sorted(d for d in (os.listdir(output_dir) if os.path.isdir(output_dir) else [])
                 if os.path.isfile(os.path.join(output_dir, d, "metadata.sqlite")))
  if pipeline and names and pipeline not in names:
    raise st.StoreError(f"{output_dir}: expected the runs of pipeline {pipeline!r}, found "
                        f"those of {', '.join(repr(n) for n in names)} (--pipeline NAME)")
  return os.path.join(output_dir, pipeline or _only_pipeline(output_dir, names),
                      "metadata.sqlite")


def _only_pipeline(where: str, names: List[str]) -> str:
  """The one pipeline of `names` (found in `where`), for a command given no
  --pipeline; the bundled `digits` when there is none.

  Raises:
    StoreError: there are several; names them.
  """
  from store.metadata import store as st
  if len(names) > 1:
    raise st.StoreError(f"{where}: holds the runs of pipelines "
                        f"{', '.join(repr(n) for n in names)}; name one with --pipeline")
  return names[0] if names else "digits"


def _runs(store, path, args) -> List[str]:
  from store.metadata import run_record
  from store.metadata import store as st
  from store.metadata.outcome import Outcome
  lines = []
  for run in st.runs(store, args.pipeline):
    reused = f"  (partial run, reusing {run.parent})" if run.parent else ""
    # What the run did, as the report and the runner say it: its Outcome.
    state = Outcome(run_record.from_store(store, args.pipeline, run, {})).state
    lines.append(f"run {run.id}  started {run.started:%Y-%m-%d %H:%M:%S}  {state}{reused}")
    for node, node_run in run.nodes.items():
      lines.append(f"  {node:<18} {node_run.state:<9}{node_run.seconds:8.1f}s"
                   f"  execution {node_run.execution.id}")
  return lines or [f"pipeline {args.pipeline!r} has no runs recorded yet"]


def _artifacts(store, path, args) -> List[str]:
  from commands.debug.artifacts import artifact_lines
  from store.metadata import store as st
  run = st.find_run(store, args.pipeline, args.run)
  lines = [f"run {run.id}"]
  node = None
  for line in artifact_lines(store, run, args.node):
    if line.node != node:
      node = line.node
      lines.append(f"  {node} ({run.nodes[node].state})")
    extra = f"  [{line.details}]" if line.details else ""
    lines.append(f"    {line.direction:<3} {line.key:<16} {line.type:<16} {line.uri}{extra}")
  return lines


def _lineage(store, path, args) -> List[str]:
  from commands.debug.lineage import lineage
  return lineage(store, args.pipeline, args.model)


def _report(store, path, args) -> List[str]:
  from store.report import write_report
  return [f"report: {write_report(path, args.pipeline, run_id=args.run, path=args.out)}"]


COMMANDS = {"runs": _runs, "artifacts": _artifacts, "lineage": _lineage, "report": _report}

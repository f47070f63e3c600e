"""Deletes the artifacts that only a local pipeline's older runs used.

`python -m retention --keep N [--delete]` (retention/__init__.py says what stays).

Dry-runs by default: lists what it would delete, with the bytes, and
deletes nothing. Exit status 2, with one line, when the store is missing or
foreign, the serving dir cannot be reached, or (with --delete) a run of
the pipeline is in progress in the folder.
"""

import argparse
import os
import sys
from typing import List, Optional, Tuple

import storage
from runner import flags

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# argparse type of --keep and --keep-runs.
keep_count = flags.whole_number(1)


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m retention",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--keep", type=keep_count, required=True, metavar="N",
                      help="keep the artifacts of the newest N runs")
  parser.add_argument("--delete", action="store_true",
                      help="delete (default: list what would be deleted, and the bytes)")
  flags.add_home_flags(parser, os.path.join(HERE, "runs"))
  parser.add_argument("--pipeline-root", metavar="URI",
                      help="local_runner.py's --pipeline-root (default: "
                           "<output-dir>/<pipeline>/pipeline_root)")
  parser.add_argument("--serving-dir", metavar="URI",
                      help="local_runner.py's --serving-dir (default: "
                           "<output-dir>/<pipeline>/serving)")
  return parser


def _megabytes(n: int) -> str:
  return f"{n / 1e6:.1f} MB"


def summary(plan, deleted: bool) -> str:
  """One line: how much was (or would be) deleted."""
  return (f"{'deleted' if deleted else 'would delete'} {len(plan.doomed)} item(s) of "
          f"{len(plan.older_runs)} older run(s), {_megabytes(plan.total_bytes)}")


def report_lines(plan, deleted: bool) -> List[str]:
  """What was (or would be) deleted, and what stays."""
  lines = [f"keeping the newest {len(plan.kept_runs)} of "
           f"{len(plan.kept_runs) + len(plan.older_runs)} runs, the lineage of "
           f"{len(plan.versions)} served version(s) ({', '.join(plan.versions) or 'none'}), "
           f"and the analyzer cache of {', '.join(plan.kept_spans) or 'no spans'}",
           summary(plan, deleted) + ":"]
  lines += [f"  {d.what:<34} {_megabytes(d.bytes):>9}  {d.uri}" for d in plan.doomed]
  if plan.skipped_outside:
    lines.append(f"kept {plan.skipped_outside} artifact(s) outside the pipeline root "
                 "(imported, or written under another --pipeline-root)")
  if not deleted:
    lines.append("dry run: nothing deleted; add --delete to delete them")
  return lines


def apply(metadata_path: str, pipeline: str, keep: int, pipeline_root: str,
          serving_dir: str, delete: bool) -> Tuple[str, List[str]]:
  """Plans, and with `delete` carries out, retention; returns its summary
  line and the report's lines.

  Raises:
    StoreError: the store is missing or not this pipeline's.
  """
  from metadata import store as st
  from retention import plan as planning
  store = st.open_store(metadata_path, writable=delete)
  st.check_pipeline(store, metadata_path, pipeline)
  storage.check([pipeline_root, serving_dir])
  found = planning.plan(store, pipeline, keep, pipeline_root, serving_dir)
  if delete:
    planning.carry_out(store, found.doomed)
  return summary(found, delete), report_lines(found, delete)


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  from metadata.store import StoreError
  from runner import run_lock
  from serving import ServingError
  home = os.path.join(args.output_dir, args.pipeline)
  metadata_path = args.metadata or os.path.join(home, "metadata.sqlite")
  try:
    if args.delete and os.path.isfile(metadata_path):
      # Never while a run of the pipeline resolves its inputs or writes.
      run_lock.hold(home, args.pipeline, "python -m retention --delete")
    _, lines = apply(metadata_path, args.pipeline, args.keep,
                  args.pipeline_root or os.path.join(home, "pipeline_root"),
                  args.serving_dir or os.path.join(home, "serving"), args.delete)
  except (StoreError, ServingError, storage.StorageError, run_lock.RunInProgress) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 0

"""Retention of a local pipeline from its ML Metadata, and the lines that
say what was (or would be) deleted, for it and for a Kubeflow pipeline's
(kubeflow/steps/retention.py). `python -m commands.retention` and
`local_runner.py --keep-runs` call `apply`."""

from typing import List, Tuple

from runtime import storage


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
           f"and the shared caches (Transform's analyzer cache, the image check's "
           f"fingerprints) of {', '.join(plan.kept_spans) or 'no spans'}",
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
  from store.metadata import store as st
  from store.retention import plan as planning
  store = st.open_store(metadata_path, writable=delete)
  st.check_pipeline(store, metadata_path, pipeline)
  storage.check([pipeline_root, serving_dir])
  found = planning.plan(store, pipeline, keep, pipeline_root, serving_dir)
  if delete:
    planning.carry_out(store, found.doomed)
  return summary(found, delete), report_lines(found, delete)

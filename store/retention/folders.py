"""What retention deletes of a Kubeflow pipeline's runs, read from the runs'
folders rather than from ML Metadata.

A Kubeflow run's artifacts are recorded in the cluster's ML Metadata, whose
address and access belong to the installation. What every step and every
user of the bucket reaches is the pipeline root: each run's folder
(runtime/run_layout.py: `<pipeline root>/<pipeline>/<run id>/` on the
open-source backend, `<pipeline root>/<project number>/<job id>/` on Vertex
AI) holds its outputs and its steps' records (kubeflow/steps/records.py). Each record lists
the URIs its step read and wrote; RunReport's lists every artifact of the
run, cached ones included. From them, as store/retention/plan.py does from ML
Metadata:
- a run's age is its first record's; the newest `keep` runs are kept,
  whatever their outcome, with every URI their records name;
- a served version's lineage: the record of the step that pushed it, what it
  read and wrote, the same for the steps that wrote what it read (a URI
  names its run and its task), and those steps' inputs' writers' outputs;
- Transform's analyzer cache of the spans the kept runs read.
Older runs' outputs that none of these name are deleted, but for the run
page's report and retention's summary (a few kilobytes a run); the records
stay too, so `python -m commands.kubeflow runs` still tells each run.

Nothing is deleted while another run is in flight: it may have been handed
an older run's output by the cache that none of its records names yet. A
run is in flight until RunReport has recorded it COMPLETE or a step FAILED
with no retry left (or none within RETRY_GRACE_HOURS: backends before 2.14
retry no step under an exit handler), or until no record of it was written
for STALE_HOURS (a killed pod's step stays RUNNING).

Deleting an output of a step Kubeflow may serve from its cache first
raises the cache epoch of the window that run read (store/retention/cache_epoch.py),
then looks again for runs in flight: one that started before the new
epoch was written is seen there, and nothing is deleted. Each run folder then gets `retention.json`,
the list of what is deleted, before its files go.
"""

import dataclasses
import datetime
import json
import os
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

import serving
from dataset import spans
from runtime import storage
from runtime.run_layout import RunFolder
from store.retention import cache_epoch
from store.retention.plan import Doomed, Plan, size_of, span_cache_entries

STALE_HOURS = 24
RETRY_GRACE_HOURS = 1  # longer than a retry's backoff (kubeflow/compile/spec.py BACKOFF)
FINISHED_BY = "RunReport"  # its COMPLETE record ends a run (kubeflow/steps/report.py)
TOMBSTONE = "retention.json"


@dataclasses.dataclass
class Run:
  """One run's folder and its steps' records: task -> record."""
  id: str
  folder: str
  records: Dict[str, dict]

  @property
  def started(self) -> str:
    return min((r.get("started") or r.get("time", "") for r in self.records.values()),
               default="")

  def in_flight(self, now: datetime.datetime) -> bool:
    if self.records.get(FINISHED_BY, {}).get("state") == "COMPLETE":
      return False
    failed = [r for r in self.records.values() if r.get("state") == "FAILED"]
    if failed:  # over, unless a retry may still come (kubeflow/steps/records.py)
      return any(r.get("attempt", 1) <= r.get("retries", 0)
                 and _age(r, now) < datetime.timedelta(hours=RETRY_GRACE_HOURS)
                 for r in failed)
    newest = min((_age(r, now) for r in self.records.values()),
                 default=datetime.timedelta.max)
    return newest < datetime.timedelta(hours=STALE_HOURS)


def _age(record: dict, now: datetime.datetime) -> datetime.timedelta:
  try:
    return now - datetime.datetime.fromisoformat(record.get("time", ""))
  except ValueError:
    return datetime.timedelta.max


@dataclasses.dataclass
class FolderPlan(Plan):
  in_flight: List[str] = dataclasses.field(default_factory=list)
  # The windows (digests; None: unknown) whose cache epoch must rise: a
  # cached step's output written over them is deleted.
  windows: Set[Optional[str]] = dataclasses.field(default_factory=set)


def _window(run: Run) -> Optional[str]:
  """The window digest of the epoch the run's first step passed on."""
  for record in run.records.values():
    epoch = record.get("parameters", {}).get(cache_epoch.PARAMETER)
    if epoch:
      return cache_epoch.window_of(epoch)
  return None


def _used(runs: Iterable[Run]) -> Set[str]:
  return {u for run in runs for r in run.records.values()
          for u in [*r.get("read", []), *r.get("wrote", [])]}


class _Index:
  """Finds the record of the step that wrote a URI."""

  def __init__(self, layout: RunFolder, runs: List[Run]):
    self.layout = layout
    self.runs = {run.id: run for run in runs}

  def holds(self, uri: str) -> bool:
    """Whether `uri` lies in a run's folder (where retention deletes)."""
    return self.layout.writer(uri) is not None

  def writer(self, uri: str) -> Optional[dict]:
    found = self.layout.writer(uri)
    if found is None:
      return None
    run, task = found
    return self.runs.get(run, Run(run, "", {})).records.get(task)


def _both(record: Optional[dict]) -> Set[str]:
  return set(record.get("read", []) + record.get("wrote", [])) if record else set()


def lineage(index: _Index, runs: List[Run], versions: List[str]) -> Set[str]:
  """The URIs the served versions need (store/retention/plan.py lineage)."""
  wanted = {os.path.normpath(v) for v in versions}
  needed = set()
  for run in runs:
    for record in run.records.values():
      pushed = {str(o.get("metadata", {}).get("pushed_destination", ""))
                for o in record.get("outputs", {}).values()}
      if not {os.path.normpath(p) for p in pushed if p} & wanted:
        continue
      needed |= _both(record)
      for uri in record.get("read", []):
        writer = index.writer(uri)
        needed |= _both(writer)
        for upstream in (writer or {}).get("read", []):
          needed |= set((index.writer(upstream) or {}).get("wrote", []))
  return needed


def _kept_spans(index: _Index, used: Set[str]) -> Set[str]:
  """The span splits (`train_span3`) of the examples the kept runs read."""
  found = set()
  for uri in used:
    for output in (index.writer(uri) or {}).get("outputs", {}).values():
      names = output.get("metadata", {}).get("split_names")
      if isinstance(names, str):
        found |= {s for s in json.loads(names) if spans.is_span_split(s)}
  return found


def plan(layout: RunFolder, runs: List[Run], keep: int, serving_dir: str,
         never_cached: Set[str], current: str = "",
         now: Optional[datetime.datetime] = None,
         history: Set[str] = frozenset()) -> FolderPlan:
  """What deleting all but the newest `keep` runs' artifacts means.

  Args:
    layout: where the pipeline's runs lie (runtime/run_layout.py; its
      run id is the current run's, or empty).
    runs: every run of the pipeline found there.
    never_cached: tasks Kubeflow never serves from its cache: deleting
      their outputs needs no new cache epoch.
    current: the run this is a step of, never counted in flight.
    history: tasks whose outputs always stay: the run page's report and
      summary, a few kilobytes each.
  """
  now = now or datetime.datetime.now(datetime.timezone.utc)
  ordered = sorted(runs, key=lambda r: r.started)
  kept, older = ordered[-keep:], ordered[:-keep]
  versions = serving.versions(serving_dir)
  index = _Index(layout, runs)
  used = _used(kept)
  keep_uris = used | lineage(index, runs, versions)
  result = FolderPlan([r.id for r in kept], [r.id for r in older],
                      [os.path.basename(v) for v in versions],
                      sorted(_kept_spans(index, used)), [],
                      in_flight=[r.id for r in runs if r.id != current and r.in_flight(now)])
  gfile = storage.gfile()
  windows = {run.id: _window(run) for run in runs}
  epochs_used = any(windows.values())  # over spans (store/retention/cache_epoch.py)
  for run in older:
    for task, record in sorted(run.records.items()):
      for uri in ([] if task in history else record.get("wrote", [])):
        if uri in keep_uris or not index.holds(uri) or not gfile.exists(uri):
          continue
        result.doomed.append(Doomed(f"{task} {uri.rstrip('/').rsplit('/', 1)[-1]}",
                                    uri, size_of(uri), run.id))
        if task not in never_cached and epochs_used:
          result.windows.add(windows[run.id])
  result.doomed += span_cache_entries(layout.root, layout.pipeline, set(result.kept_spans))
  return result


def carry_out(layout: RunFolder, found: FolderPlan, runs: Dict[str, Run],
              in_flight_now: Callable[[], List[str]]) -> Tuple[bool, List[str]]:
  """Deletes what `found` lists, unless a run is in flight; returns whether
  it deleted, and what happened, in lines."""
  if found.in_flight:
    return False, [f"deleted nothing: run(s) in flight ({', '.join(found.in_flight)}) "
                   "may read an older run's output"]
  lines = []
  if found.windows:
    cache_epoch.bump(layout.home, found.windows)
    named = sorted(w or "every window" for w in found.windows)
    lines.append(f"new cache epoch for {', '.join(named)}: a run over it runs its "
                 "steps again rather than take deleted outputs from Kubeflow's cache")
    late = in_flight_now()
    if late:
      return False, lines + [f"deleted nothing: run(s) started meanwhile ({', '.join(late)})"]
  gfile = storage.gfile()
  stamp = datetime.datetime.now(datetime.timezone.utc).isoformat()
  for run_id in sorted({d.run for d in found.doomed if d.run}):
    path = f"{runs[run_id].folder}/{TOMBSTONE}"
    listed = []
    if gfile.exists(path):
      with gfile.GFile(path) as f:
        listed = json.load(f)
    listed += [{"uri": d.uri, "what": d.what, "bytes": d.bytes, "time": stamp}
               for d in found.doomed if d.run == run_id]
    with gfile.GFile(path, "w") as f:
      f.write(json.dumps(listed, indent=1))
  for item in found.doomed:
    if gfile.isdir(item.uri):
      gfile.rmtree(item.uri)
    elif gfile.exists(item.uri):
      gfile.remove(item.uri)
  return True, lines

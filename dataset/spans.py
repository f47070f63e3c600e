"""Which data a run reads: the span window, resolved when the run starts.

New data arrives as spans: `span-<N>/` folders under the data root, as
`tfrecords convert --span N` writes them, optionally with versions inside
(`span-<N>/version-<M>/`; the newest version of a span is read). A pattern
says where with TFX's placeholders: `span-{SPAN}/train/*` or
`span-{SPAN}/version-{VERSION}/train/*`.

A run reads the last `data.window` spans (1, the latest, by default). TFX's
own window (a resolver with SpanRangeStrategy) does not compile for Kubeflow
Pipelines v2, so the window is resolved here, by listing the spans when the
run starts: by `local_runner.py` when it builds the pipeline, and on
Kubeflow by the run's first step, SpanWindow (kubeflow/steps/span_window.py),
which passes the result on to the later steps as output parameters. Each
span of the window becomes its own pair of splits (`train_span4`,
`eval_span4`, ...) of one ImportExampleGen output, so that
Transform can key its analyzer cache by span (components/transform/transform.py) and
the split names say which data a model saw. Data without `{SPAN}` keeps the
splits `train` and `eval`.

Spans are immutable: a span, once trained on, is never rewritten; corrected
data is a new version of it (or a new span). The caches rely on this.
"""

import dataclasses
import hashlib
import os
import re
from typing import Dict, List, Optional, Tuple

from dataset.declaration import Data, DeclarationError
from runtime import storage

SPAN = "{SPAN}"
# The folder TFX gives each split of an artifact (standard_artifact_utils.get_split_uri).
SPLIT_FOLDER_PREFIX = "Split-"
VERSION = "{VERSION}"


@dataclasses.dataclass(frozen=True)
class Window:
  """The data one run reads.

  Attributes:
    spans: (span, version or None) for each span read, oldest first; empty
      for data without spans.
    inputs: ImportExampleGen's input split name -> glob below the data root.
    train_splits, eval_splits: the output split names to train and
      evaluate on.
  """
  spans: Tuple[Tuple[int, Optional[int]], ...]
  inputs: Dict[str, str]
  train_splits: Tuple[str, ...]
  eval_splits: Tuple[str, ...]
  unresolved: bool = False
  notes: Tuple[str, ...] = ()  # what was skipped, or a window cut short
  # The complete span before the newest one, and its training data's glob
  # below the root (`train`, or `all` for data split by hash): what the drift
  # check compares the newest span with (components/drift_gate/drift_gate.py).
  previous: Optional[Tuple[int, Optional[int]]] = None
  previous_glob: str = ""

  def describe(self) -> str:
    """`spans 3-4`, `span 4 (version 2)`, or `all data` without spans."""
    if not self.spans:
      return "all data"
    names = [f"{s}" + (f" (version {v})" if v is not None else "")
             for s, v in self.spans]
    return f"span {names[0]}" if len(names) == 1 else f"spans {', '.join(names)}"


# A window's split names (`train_span4`, `eval_span4_v2`): written by
# `split_suffix`, read by `span_of_split` and `version_of_split`, nowhere else.
_SPLIT_SPAN = re.compile(r"_span(\d+)(?:_v(\d+))?$")


def split_suffix(span: int, version: Optional[int]) -> str:
  return f"_span{span}" + (f"_v{version}" if version is not None else "")


def span_of_split(split: str) -> Optional[int]:
  """The span a split name is of (`train_span4`, `eval_span4_v2`: 4), or
  None for a split of data without spans (`train`)."""
  found = _SPLIT_SPAN.search(split)
  return int(found.group(1)) if found else None


def version_of_split(split: str) -> Optional[int]:
  """The span's data version a split name is of (`eval_span4_v2`: 2), or
  None (`eval_span4`, `train`)."""
  found = _SPLIT_SPAN.search(split)
  return int(found.group(2)) if found and found.group(2) else None


def split_of(file_pattern: str) -> str:
  """The split a TFX split file pattern is of: `train_span4` for
  `<uri>/Split-train_span4/*`, as TFX builds it from an Examples artifact
  (examples_utils.get_split_file_patterns; the Trainer and Transform get
  only the patterns)."""
  folder = os.path.basename(os.path.dirname(file_pattern))
  return folder[len(SPLIT_FOLDER_PREFIX):] if folder.startswith(SPLIT_FOLDER_PREFIX) else ""


def is_span_split(split: str) -> bool:
  return span_of_split(split) is not None


def _regex(pattern: str):
  """A regex for a pattern with {SPAN} and maybe {VERSION}, glob wildcards
  matching within one folder."""
  rx = re.escape(pattern)
  rx = rx.replace(re.escape(SPAN), r"(?P<span>\d+)")
  rx = rx.replace(re.escape(VERSION), r"(?P<version>\d+)")
  return re.compile(rx.replace(r"\*", r"[^/]*").replace(r"\?", "[^/]") + "$")


def available(root: str, pattern: str) -> Tuple[Dict[int, List[int]], List[str]]:
  """(span -> its versions ([] without {VERSION}) that have files for
  `pattern`, the paths that the pattern's wildcards match but whose span
  or version is not a number)."""
  full = os.path.join(root, pattern)
  rx = _regex(full)
  found: Dict[int, set] = {}
  malformed = []
  for path in storage.glob(full.replace(SPAN, "*").replace(VERSION, "*")):
    match = rx.match(path)
    if not match:
      malformed.append(path)
      continue
    versions = found.setdefault(int(match.group("span")), set())
    if match.groupdict().get("version") is not None:
      versions.add(int(match.group("version")))
  return {span: sorted(v) for span, v in found.items()}, malformed


def fill(pattern: str, span: int, version: Optional[int]) -> str:
  pattern = pattern.replace(SPAN, str(span))
  return pattern if version is None else pattern.replace(VERSION, str(version))


def resolve(data: Data, source: str = "data") -> Window:
  """The window of spans to read now.

  Args:
    data: the declaration's data section.
    source: names the declaration in errors.

  Raises:
    DeclarationError: when the patterns use spans but none has files for
      every split.
    StorageError: the data root's bucket cannot be reached (an unreachable
      bucket would otherwise list as empty: "no spans").
  """
  patterns = dict(data.splits) or {"all": data.pattern}
  if not any(SPAN in p for p in patterns.values()):
    return Window((), patterns, ("train",), ("eval",))
  storage.check([data.root], f"{source}: data.root ")
  listed = [available(data.root, p) for p in patterns.values()]
  found = [f for f, _ in listed]
  # A span counts once every split has it (a span still being written may not).
  spans = sorted(set.intersection(*(set(f) for f in found)))
  notes = _notes(data, found, spans, [m for _, bad in listed for m in bad])
  if not spans:
    raise DeclarationError(
        f"{source}: field 'data': expected span folders matching "
        f"{', '.join(os.path.join(data.root, p) for p in patterns.values())}, "
        f"found none" + (f" ({'; '.join(notes)})" if notes else ""))
  def newest_version(span):
    versions = set.intersection(*(set(f[span]) for f in found))
    return max(versions) if versions else None
  chosen = [(span, newest_version(span)) for span in spans[-data.window:]]
  previous = (spans[-2], newest_version(spans[-2])) if len(spans) > 1 else None
  training = data.splits.get("train", data.pattern)
  earlier = dict(previous=previous,
                 previous_glob=fill(training, *previous) if previous else "")
  if not data.splits:
    # One folder per span, split by hash: one span (the window is 1).
    span, version = chosen[-1]
    return Window(tuple(chosen), {"all": fill(data.pattern, span, version)},
                  ("train",), ("eval",), notes=notes, **earlier)
  inputs = {f"{split}{split_suffix(s, v)}": fill(pattern, s, v)
            for s, v in chosen for split, pattern in data.splits.items()}
  return Window(tuple(chosen), inputs,
                tuple(f"train{split_suffix(s, v)}" for s, v in chosen),
                tuple(f"eval{split_suffix(s, v)}" for s, v in chosen), notes=notes,
                **earlier)


def _notes(data: Data, found: List[Dict], complete: List[int], malformed: List[str]):
  """One line for each thing a user would want to know the window left out."""
  notes = [f"skipped {folder}: its span (or version) is not a number"
           for folder in sorted({os.path.dirname(m) for m in malformed})]
  for span in sorted(set().union(*(set(f) for f in found)) - set(complete)):
    notes.append(f"skipped span {span}: not every split has files yet")
  if complete and len(complete) < data.window:
    notes.append(f"window {data.window}: only {len(complete)} span(s) found, "
                 f"reading {', '.join(map(str, complete))}")
  return tuple(notes)


def has_spans(data: Data) -> bool:
  """Whether the data is read by span: a pattern holds `{SPAN}`."""
  return any(SPAN in p for p in (dict(data.splits) or {"all": data.pattern}).values())


def unresolved(data: Data) -> Window:
  """The window as far as it is known without listing anything: all of it
  without spans; with spans, the patterns with `{SPAN}` still in them, which
  compiled Kubeflow defaults hold until `submit` passes the real window."""
  patterns = dict(data.splits) or {"all": data.pattern}
  return Window((), patterns, ("train",), ("eval",), unresolved=has_spans(data))


def fingerprint(root: str, inputs: Dict[str, str]) -> str:
  """A hash of the files a window reads: their paths, sizes and modification
  times, as ImportExampleGen's own fingerprint has them. Rewritten data gives
  a new one, even where the split names stay `train` and `eval`."""
  digest = hashlib.sha256()
  for name, pattern in sorted(inputs.items()):
    for path in storage.glob(os.path.join(root, pattern)):
      stat = storage.gfile().stat(path)
      digest.update(f"{name}\0{path}\0{stat.length}\0{stat.mtime_nsec}\n".encode())
  return digest.hexdigest()[:16]

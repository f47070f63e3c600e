"""What each version of a serving dir is, and putting an earlier one back:
`python -m commands.serving versions` and `python -m commands.serving rollback`.

A version's own records say what it was trained on (`trained_on.json`),
what blessed it (`blessed.json`, the Evaluator's judgement, written with
the push, and its model card, `model_card.md` and `.html`) and, for a
rollback, which version it copies (`rollback.json`);
its number is the Unix time it was pushed. Nothing here needs ML
Metadata, so a Kubeflow run's versions read the same as a local run's.
"""

import datetime
import json
import os
from typing import List, Optional

import serving
from runtime import storage


def _record(model_dir: str, name: str) -> Optional[dict]:
  path = os.path.join(model_dir, name)
  if not storage.gfile().exists(path):
    return None
  with storage.gfile().GFile(path) as f:
    return json.load(f)


def rolled_back(model_dir: str) -> Optional[dict]:
  """{"to": the version copied, "from": the version it replaced}, for a
  rollback's version; None for a pushed model."""
  return _record(model_dir, serving.ROLLBACK)


def blessed(model_dir: str) -> Optional[dict]:
  """The judgement that let a version in (components/evaluator/evaluator.py):
  `metric`, `value`, `baseline_value`, `judged_against`, and the run that
  pushed it; None for a version pushed before versions recorded it."""
  return _record(model_dir, serving.BLESSED)


def _blessing_words(record: Optional[dict]) -> str:
  if not record or record.get("value") is None:
    return "blessing: not recorded"
  words = f"{record['metric']} {record['value']:.4f}"
  if record.get("baseline_value") is not None:
    words += (f" against {record['baseline_value']:.4f} of version "
              f"{record['judged_against']}")
  return words


def version_lines(serving_dir: str) -> List[str]:
  """One line per complete version, newest (the served one) first."""
  lines = []
  for i, path in enumerate(serving.versions(serving_dir)):
    version = os.path.basename(path)
    when = datetime.datetime.fromtimestamp(int(version), datetime.timezone.utc)
    back = rolled_back(path)
    splits = serving.trained_on(path)
    parts = [version, "served" if i == 0 else "      ", f"pushed {when:%Y-%m-%d %H:%M:%S} UTC",
             f"trained on {', '.join(splits)}" if splits else "trained on: not recorded",
             _blessing_words(blessed(path))]
    if back:
      parts.append(f"rollback: a copy of {back['to']} (replacing {back['from']})")
    if storage.gfile().exists(os.path.join(path, serving.CARD)):
      parts.append(f"card: {os.path.join(path, serving.CARD)}")
    lines.append("  ".join(parts))
  return lines or [f"no complete version in {serving_dir}"]


def resolve(base_directory: str, to: Optional[str] = None) -> str:
  """The version a rollback copies: `to`, or by default the one before the
  newest. Reads only, so a caller can refuse before anything is pushed.

  Raises:
    serving.ServingError: no such complete version, or nothing to roll back to.
  """
  names = [os.path.basename(p) for p in serving.versions(base_directory)]
  if to is None:
    if len(names) < 2:
      raise serving.ServingError(
          f"{base_directory}: nothing to roll back to: "
          f"{'one complete version' if names else 'no complete version'}"
          f" ({', '.join(names) or 'none'})")
    to = names[1]
  if to not in names:
    raise serving.ServingError(f"{base_directory}: version {to}: expected one of the "
                               f"complete versions {', '.join(names) or '(none)'}")
  return to


def rollback(base_directory: str, to: Optional[str] = None) -> str:
  """Pushes a copy of version `to` (default: the one before the newest) as
  the newest version, recording which it copies and which it replaced.
  Deletes nothing; the copy keeps the judgement that blessed the original.

  Raises:
    serving.ServingError: no such complete version, or nothing to roll back to.
  """
  to = resolve(base_directory, to)
  newest = serving.latest(base_directory)
  note = json.dumps({"to": to, "from": os.path.basename(newest)})
  return serving.push(os.path.join(base_directory, to), base_directory,
                      extra={serving.ROLLBACK: note})


def rollback_lines(serving_dir: str, to: Optional[str]) -> List[str]:
  """Rolls back (`rollback`) and says what happened."""
  return pushed_lines(rollback(serving_dir, to))


def pushed_lines(path: str) -> List[str]:
  """What a rollback that pushed `path` did."""
  back = rolled_back(path)
  return [f"rolled back: version {os.path.basename(path)} is a copy of {back['to']}, "
          f"now the newest (it was {back['from']}); nothing was deleted",
          "a model server that follows the newest version serves it at its next poll"]

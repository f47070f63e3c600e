"""One line per check, and the exit status they make.

  ok  <what>
  FAIL <what>: <what was expected and found>; fix: <the command or manifest>
  not checked <what>: <why>

A line that was not checked never fails the run by itself: the user may
lack the right to read what it needs, which says nothing of the run's.
"""

import dataclasses
import re
from typing import Iterable

OK, FAILED, UNCHECKED = "ok", "FAIL", "not checked"


@dataclasses.dataclass(frozen=True)
class Line:
  """A check's verdict.

  Attributes:
    verdict: OK, FAILED or UNCHECKED.
    what: what was checked, e.g. "the Secret mlpipeline-minio-artifact".
    found: for FAILED, what was expected and found; for UNCHECKED, why not.
    fix: for FAILED, the command or manifest that fixes it.
  """
  verdict: str
  what: str
  found: str = ""
  fix: str = ""

  def __str__(self) -> str:
    if self.verdict == OK:
      return f"ok  {self.what}"
    if self.verdict == UNCHECKED:
      return f"not checked {self.what}: {self.found}"
    # A library's message ending in a full stop would read "found.; fix".
    found = self.found[:-1] if re.search(r"[^.]\.$", self.found) else self.found
    return f"FAIL {self.what}: {found}; fix: {self.fix}"


def ok(what: str) -> Line:
  return Line(OK, what)


def fail(what: str, found: str, fix: str) -> Line:
  return Line(FAILED, what, found, fix)


def unchecked(what: str, why: str) -> Line:
  return Line(UNCHECKED, what, why)


def status(lines: Iterable[Line]) -> int:
  """0 when nothing would stop the run, 1 when something would."""
  return 1 if any(line.verdict == FAILED for line in lines) else 0

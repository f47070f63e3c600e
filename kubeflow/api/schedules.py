"""Cron expressions as Kubeflow Pipelines' scheduler takes them, checked here.

The scheduler (robfig/cron) reads six fields, seconds first; the usual five
fields are accepted too and get a leading `0` seconds. Descriptors such as
`@daily` and `@every 6h` pass through. Checking here means a typo fails
before anything is uploaded. `check_catchup`: where each backend takes
`--catchup`.
"""

import argparse
import re
from typing import Optional

DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily",
               "@midnight", "@hourly")
# (name, lowest, highest, names allowed in place of numbers)
FIELDS = (("second", 0, 59, ()), ("minute", 0, 59, ()), ("hour", 0, 23, ()),
          ("day of month", 1, 31, ()),
          ("month", 1, 12, ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL",
                            "AUG", "SEP", "OCT", "NOV", "DEC")),
          ("day of week", 0, 6, ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")))
_EVERY = re.compile(r"@every (\d+(\.\d+)?(ns|us|ms|s|m|h))+$")


class CronError(ValueError):
  """A malformed cron expression; says which field and why."""


def _value(text: str, field) -> int:
  name, low, high, names = field
  if text.upper() in names:
    return names.index(text.upper()) + low
  if not text.isdigit() or not low <= int(text) <= high:
    raise CronError(f"{name}: expected a number in [{low}, {high}]"
                    f"{' or a name' if names else ''}, found {text!r}")
  return int(text)


def _check_field(text: str, field) -> None:
  for part in text.split(","):
    body, _, step = part.partition("/")
    if step and (not step.isdigit() or int(step) == 0):
      raise CronError(f"{field[0]}: expected a step >= 1 after '/', found {step!r}")
    if body in ("*", "?"):
      continue
    low, _, high = body.partition("-")
    if high and _value(low, field) > _value(high, field):
      raise CronError(f"{field[0]}: range {body!r} runs backwards")
    _value(low, field)


def normalize(expression: str) -> str:
  """The six-field (or descriptor) form of a cron expression.

  Raises:
    CronError: naming the field, what was expected and what was found.
  """
  text = " ".join(expression.split())
  if text in DESCRIPTORS or _EVERY.match(text):
    return text
  parts = text.split(" ")
  if len(parts) == 5:
    parts = ["0"] + parts
  if len(parts) != 6:
    raise CronError(f"expected 5 fields (minute hour day month weekday) or 6 "
                    f"(seconds first), or a descriptor such as @daily; found "
                    f"{len(parts)} field(s) in {expression!r}")
  for part, field in zip(parts, FIELDS):
    _check_field(part, field)
  return " ".join(parts)


# Vertex AI's Schedule.cron is the usual five fields, after an optional
# `TZ=` or `CRON_TZ=` time zone (REST reference, projects.locations.schedules).
VERTEX_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
                      "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
                      "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_ZONE = re.compile(r"^((?:CRON_)?TZ=\S+) +")


def _check_zone(name: str, expression: str) -> None:
  """Vertex AI takes IANA time zone names only (aiplatform_v1 types/schedule.py
  line 53): checked here against the IANA database (the `tzdata` package the
  lock pins), so a misspelt one stops before anything is sent."""
  import difflib
  import zoneinfo
  known = zoneinfo.available_timezones()
  if name not in known:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise CronError(f"time zone {name!r} in {expression!r}: expected a name of the IANA "
                    f"time zone database such as Europe/Berlin{hint}")


def for_vertex(expression: str) -> str:
  """The five-field form Vertex AI takes, its time zone prefix kept.

  Raises:
    CronError: as `normalize`, or for a form only Kubeflow's scheduler takes.
  """
  zone = _ZONE.match(expression.strip())
  if zone:
    _check_zone(zone.group(1).split("=", 1)[1], expression)
  text = expression.strip()[zone.end():] if zone else expression
  six = normalize(VERTEX_DESCRIPTORS.get(text.strip(), text))
  if six.startswith("@") or not six.startswith("0 "):
    raise CronError(f"expected 5 fields (minute hour day month weekday) or a descriptor "
                    f"such as @daily, as Vertex AI takes them; found {expression!r}")
  return (f"{zone.group(1)} " if zone else "") + six[2:]


def check_catchup(on_vertex: bool, command: str, name: Optional[str]) -> None:
  """Raises ArgumentTypeError, one line, for `--catchup` where the backend
  cannot take it. Kubeflow takes it when the recurring run is made
  (`no_catchup`), not on enable; Vertex AI only on resume
  (ResumeScheduleRequest.catch_up): its Schedule.catch_up is output only
  (google-cloud-aiplatform v1.165.1 aiplatform_v1/types/schedule.py line 134,
  schedule_service.py lines 248-255)."""
  if on_vertex and command == "schedule":
    raise argparse.ArgumentTypeError(
        "--catchup: Vertex AI takes no catch-up when a schedule is created; it starts the "
        "runs a paused schedule missed only if asked when resuming it: `schedules resume "
        f"{name} --catchup --backend vertex`")
  if command != "schedule" and not (on_vertex and command == "schedules resume"):
    where = "Vertex AI takes it on resume only" if on_vertex else \
        "Kubeflow takes it when the schedule is made: `schedule --catchup`"
    raise argparse.ArgumentTypeError(f"--catchup: not taken by `{command}` ({where})")

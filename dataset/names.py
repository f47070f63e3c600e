"""Which names a feature may have, and the name convert gives a column that
has none of those.

A feature's name is its key in the records, in TFX's schema and
statistics, a Keras input, an input of the JSON serving signature and a key
of TF Serving's JSON. The signature is the narrowest of these: TensorFlow
turns each input's name into a Python argument name when it saves a
SavedModel: `mean radius`, `fare(usd)`, `_x` and `été` fail the export
("non-flat/non-unique argument names"), and `od280/od315`, `a.b` and `1st`
come back as `od280_od315`, `a_b` and `arg_1st`, inputs no client is told
about. `tests/unit/dataset/test_names.py` holds the rule
against TensorFlow's own behaviour.

`problem` is checked when a declaration is read (dataset/declaration.py),
so no run can train and then fail on a name; `column_names` maps a table's
columns for `tfrecords convert`, which keeps the original as the feature's
`source`.
"""

import re
from typing import Dict, Iterable, Optional

RULE = "an ASCII letter, then ASCII letters, digits and '_'"
_VALID = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_OTHER = re.compile(r"[^A-Za-z0-9]+")
# The model's input that says an optional numeric feature's value was
# missing is `<name>__missing` (dataset/types.py Feature.missing_indicator).
INDICATOR_SUFFIX = "__missing"


def problem(name: str) -> Optional[str]:
  """Why `name` cannot be a feature's name, or None when it can."""
  if not _VALID.match(name):
    return f"a name of {RULE}"
  if name.endswith(INDICATOR_SUFFIX):
    return (f"a name not ending in {INDICATOR_SUFFIX!r} (the model's input "
            "that says an optional feature's value is missing ends so)")
  return None


def refusal(name: str) -> Optional[str]:
  """What a declaration's feature name was expected to be, with the fix,
  or None when `name` is one."""
  wrong = problem(name)
  return wrong and (f"{wrong}, as a serving signature's input must be; rename it, "
                    f"e.g. to {suggest(name)!r}, in the records too (`tfrecords "
                    "convert table` renames a table's columns so)")


def suggest(name: str) -> str:
  """A valid name close to `name`: each run of other characters (and of
  '_', so never `__missing`) becomes one '_' (`od280/od315` ->
  `od280_od315`), `f_` before a leading digit."""
  text = _OTHER.sub("_", name).strip("_") or "feature"
  if not text[0].isalpha():
    text = "f_" + text
  return text


def column_names(columns: Iterable[str]) -> Dict[str, str]:
  """Each column's feature name: itself when valid, else `suggest`'s, with
  `_2`, `_3` ... where two would meet (`a b` and `a_b`)."""
  columns = list(columns)
  taken = {c for c in columns if problem(c) is None}
  names = {}
  for column in columns:
    if problem(column) is None:
      names[column] = column
      continue
    base = suggest(column)
    name, n = base, 2
    while name in taken:
      name, n = f"{base}_{n}", n + 1
    taken.add(name)
    names[column] = name
  return names


def renamed_line(names: Dict[str, str], shown: int = 4) -> Optional[str]:
  """The one line convert prints for the columns it renamed, or None."""
  moved = [(c, n) for c, n in names.items() if c != n]
  if not moved:
    return None
  listed = ", ".join(f"{c!r} -> {n}" for c, n in moved[:shown])
  more = f", and {len(moved) - shown} more" if len(moved) > shown else ""
  return (f"renamed {len(moved)} column(s) to feature names ({RULE}; the "
          f"declaration keeps each as `source:`): {listed}{more}")

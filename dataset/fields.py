"""Typed fields from a parsed YAML mapping, with errors that name the field.

Every error names the file, the dotted field, what was expected and what was
found, so that a user can fix a declaration without reading the code.
"""

import difflib
from typing import Any, Iterable, Mapping, Optional, Tuple


class DeclarationError(ValueError):
  """A declaration that does not match its format, or its data.

  The message always names the file, the field, what was expected and what was
  found, so that a user can fix it without reading this module.
  """


class _Missing:
  def __repr__(self):
    return "nothing (the field is missing)"


MISSING = _Missing()
_TYPE_NAMES = {int: "an integer", str: "a string", dict: "a mapping", list: "a list",
               bool: "true or false", (int, float): "a number"}


class FieldReader:
  """Reads typed fields from a YAML mapping, naming the file and field on error."""

  def __init__(self, path: str):
    self.path = path

  def fail(self, field: str, expected: str, found: Any, hint: str = "") -> DeclarationError:
    """The error for `field`: `hint` (e.g. `closest`'s) before what was expected."""
    return DeclarationError(
        f"{self.path}: field '{field}': {hint}expected {expected}, found {found!r}")

  def mapping(self, node: Any, field: str, allowed: Tuple[str, ...]) -> Mapping:
    if not isinstance(node, Mapping):
      raise self.fail(field, "a mapping", node)
    unknown = sorted(set(node) - set(allowed), key=str)
    if unknown:
      raise self.unknown_key(field, unknown[0], allowed)
    return node

  def unknown_key(self, field: str, key: Any, allowed: Iterable[str]) -> DeclarationError:
    """An unknown key, with the known one it is most likely a typo of."""
    allowed = list(allowed)
    name = f"{field}.{key}" if field else str(key)
    return DeclarationError(
        f"{self.path}: field '{name}': {closest(str(key), allowed)}expected one of "
        f"the keys {', '.join(allowed)}, found the unknown key {key!r}")

  def get(self, node: Mapping, field: str, key: str, kind: type,
          default: Any = ..., choices: Tuple = (), minimum: Optional[int] = None):
    name = f"{field}.{key}" if field else key
    if key not in node:
      if default is ...:
        raise self.fail(name, _TYPE_NAMES[kind], MISSING)
      return default
    value = node[key]
    if (kind is not bool and isinstance(value, bool)) or not isinstance(value, kind):
      raise self.fail(name, _TYPE_NAMES[kind], value)
    if choices and value not in choices:
      hint = closest(value, map(str, choices)) if isinstance(value, str) else ""
      raise self.fail(name, f"one of {', '.join(map(str, choices))}", value, hint)
    if minimum is not None and value < minimum:
      raise self.fail(name, f"an integer >= {minimum}", value)
    return value


def closest(word: str, known: Iterable[str]) -> str:
  """"did you mean 'X'? " for the known word closest to `word`, or ""."""
  match = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
  return f"did you mean {match[0]!r}? " if match else ""

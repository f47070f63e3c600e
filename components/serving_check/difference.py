"""How a served signature's inputs differ from the declared ones, in words
the serving check's reason can carry (components/serving_check/check.py):
a renamed input is one difference, not two lists of thirteen."""

import re


def _folded(name: str) -> str:
  return re.sub(r"[^a-z0-9]", "", name.lower())


def difference(wanted: dict, found: dict) -> str:
  """How a signature's inputs `found` differ from the `wanted` ones (name ->
  (dtype, shape)), in words: renamed (the same name but for case and
  punctuation, as TensorFlow renames an input), missing, extra, retyped."""
  missing = sorted(set(wanted) - set(found))
  extra = sorted(set(found) - set(wanted))
  parts = []
  for name in list(missing):
    twin = [e for e in extra if _folded(e) == _folded(name)]
    if twin:
      parts.append(f"{name!r} became {twin[0]!r}")
      missing.remove(name)
      extra.remove(twin[0])
  parts += [f"{name!r} missing" for name in missing]
  parts += [f"{name!r} not declared" for name in extra]
  parts += [f"{name!r} is {found[name][0]} {found[name][1]}, declared "
            f"{wanted[name][0]} {wanted[name][1]}"
            for name in sorted(set(wanted) & set(found)) if wanted[name] != found[name]]
  return "; ".join(parts)

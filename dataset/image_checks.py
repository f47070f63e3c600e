"""The declaration's `image_checks:` section: per kind of finding of the
image check (components/image_check/; on data without an image, the row
check, rows.py there), whether it stops the run, warns, or is ignored.

    image_checks:
      leak: stop            # eval images that repeat train images (default)
      near_duplicate: ignore

The defaults protect the blessing: a leak between train and eval stops the
run (its accuracy would be judged on pictures the model trained on); every
other kind warns."""

from typing import Any, Dict, Mapping, Sequence, Tuple

from dataset.fields import FieldReader

DEFAULTS = {
    "leak": "stop", "label_conflict": "warn", "exact_duplicate": "warn",
    "near_duplicate": "warn", "undecodable": "warn", "dark": "warn", "light": "warn",
    "blank": "warn", "blurry": "warn", "tiny": "warn", "odd_size": "warn",
    "minority_class": "warn", "small_eval_class": "warn",
}
DECISIONS = ("stop", "warn", "ignore")


def parse(r: FieldReader, node: Any) -> Tuple[Tuple[str, str], ...]:
  """The section as sorted (kind, decision) pairs: only what it sets."""
  node = r.mapping(node, "image_checks", tuple(DEFAULTS))
  for kind in node:
    r.get(node, "image_checks", kind, str, None, DECISIONS)
  return tuple(sorted((str(k), str(v)) for k, v in node.items()))


def decisions(*layers: Sequence[Tuple[str, str]]) -> Dict[str, str]:
  """Each kind's decision: the defaults, then each layer over them.

  Raises:
    ValueError: an unknown kind or decision, named.
  """
  chosen = dict(DEFAULTS)
  for layer in layers:
    for kind, decision in (layer.items() if isinstance(layer, Mapping) else layer):
      if kind not in DEFAULTS:
        raise ValueError(f"image check kind {kind!r}: expected one of {', '.join(DEFAULTS)}")
      if decision not in DECISIONS:
        raise ValueError(f"image check {kind}={decision!r}: expected one of "
                         f"{', '.join(DECISIONS)}")
      chosen[kind] = decision
  return chosen

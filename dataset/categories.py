"""A categorical feature's ids: its declared `values`, or hash buckets.

Either way the ids, and so the model's shape, come from the declaration,
never from the data. A vocabulary computed from each window (TFT's, as
this project once used) changes the embedding's shape whenever a category
appears or disappears between spans, and re-numbers the rest by frequency:
a warm start then breaks ("the architecture changed") or, worse, starts
from embeddings that now belong to other categories.

- `values: [A, B, C]`: each value keeps its position for good; a value
  outside the list shares the `num_oov_buckets` buckets (default 1). Exact,
  for sets that are known and change rarely; adding a value changes the
  shape once, as any change to the declaration does.
- otherwise `hash_buckets` (default 64): a value's id is its FarmHash
  fingerprint's bucket, the same on every run, runner and worker. Any new
  value gets an id at once; two values may share one (with 64 buckets and
  10 values, about half the time some pair does: declare `values`, or more
  buckets, where that matters).
"""

from typing import Any, Mapping

from dataset.fields import MISSING, FieldReader
from dataset.types import Feature

DEFAULT_HASH_BUCKETS = 64


def categorical(r: FieldReader, field: str, name: str, node: Mapping[str, Any]) -> Feature:
  """A `kind: categorical` feature from its declaration."""
  dtype = r.get(node, field, "dtype", str, choices=("string", "int"))
  if "top_k" in node:
    raise r.fail(f"{field}.top_k", "no top_k: ids come from `values:` (declared) or "
                 "`hash_buckets:`, so that the model's shape does not follow the data",
                 node["top_k"])
  values = r.get(node, field, "values", list, [])
  kind = str if dtype == "string" else int
  for value in values:
    if isinstance(value, bool) or not isinstance(value, kind):
      raise r.fail(f"{field}.values", f"a list of {'strings' if kind is str else 'integers'}"
                   f" (dtype {dtype})", value)
  if "values" in node and (not values or len(set(values)) != len(values)):
    raise r.fail(f"{field}.values", "a non-empty list of distinct values", values or MISSING)
  if values and "hash_buckets" in node:
    raise r.fail(f"{field}.hash_buckets", "no hash_buckets beside values: a declared "
                 "value has its own id", node["hash_buckets"])
  if not values and "num_oov_buckets" in node:
    raise r.fail(f"{field}.num_oov_buckets", "none without `values:` (OOV buckets hold "
                 "the values outside a declared list; hashed values need none)",
                 node["num_oov_buckets"])
  return Feature(name, "categorical", dtype=dtype, values=tuple(str(v) for v in values),
                 num_oov_buckets=r.get(node, field, "num_oov_buckets", int, 1, minimum=1),
                 hash_buckets=0 if values else r.get(node, field, "hash_buckets", int,
                                                     DEFAULT_HASH_BUCKETS, minimum=2))

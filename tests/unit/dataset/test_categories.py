"""A categorical feature's ids are declared, never computed from the data:
its `values`, or hash buckets; each mistake is one error naming the field."""

import pytest

from dataset import declaration
from dataset.categories import DEFAULT_HASH_BUCKETS
from tests.conftest import DIGITS_SCHEMA, digits_raw, write_declaration


def _load(tmp_path, shape: dict):
  raw = digits_raw()
  raw["data"]["root"] = str(tmp_path)
  raw["schema"] = DIGITS_SCHEMA
  raw["features"]["shape"] = {"kind": "categorical", "dtype": "string", **shape}
  return declaration.load(write_declaration(tmp_path, raw))


def _shape(decl):
  (shape,) = [f for f in decl.features if f.name == "shape"]
  return shape


def test_values_or_else_hash_buckets_fix_the_model_s_ids(tmp_path):
  declared = _shape(_load(tmp_path, {"values": ["square", "tall", "wide"],
                                     "num_oov_buckets": 2}))
  assert declared.values == ("square", "tall", "wide") and declared.id_count == 3 + 1 + 2
  hashed = _shape(_load(tmp_path, {}))
  assert hashed.values == () and hashed.id_count == DEFAULT_HASH_BUCKETS
  assert _shape(_load(tmp_path, {"hash_buckets": 8})).id_count == 8
  # The compiled form (a Kubeflow step's, a Trainer's) keeps them.
  decl = _load(tmp_path, {"values": ["square", "tall", "wide"]})
  assert _shape(declaration.Declaration.from_dict(decl.contract())) == _shape(decl)


@pytest.mark.parametrize("shape, field, expected", [
    ({"top_k": 5}, "top_k", "no top_k: ids come from `values:`"),
    ({"values": []}, "values", "a non-empty list of distinct values"),
    ({"values": ["tall", "tall"]}, "values", "a non-empty list of distinct values"),
    ({"values": ["tall", 3]}, "values", "a list of strings (dtype string), found 3"),
    ({"values": ["tall"], "hash_buckets": 8}, "hash_buckets",
     "no hash_buckets beside values"),
    ({"num_oov_buckets": 2}, "num_oov_buckets", "none without `values:`"),
    ({"hash_buckets": 1}, "hash_buckets", "an integer >= 2"),
])
def test_a_bad_id_declaration_is_one_error_naming_the_field(tmp_path, shape, field, expected):
  with pytest.raises(declaration.DeclarationError) as e:
    _load(tmp_path, shape)
  assert f"field 'features.shape.{field}': expected {expected}" in str(e.value), str(e.value)

"""The declaration's `image_checks:` (dataset/image_checks.py)."""

import pytest

from dataset import declaration, image_checks
from tests.conftest import digits_raw, write_declaration


def test_the_section_sets_kinds_over_the_defaults(tmp_path):
  raw = dict(digits_raw(), image_checks={"leak": "warn", "blurry": "ignore"})
  raw.pop("schema")
  decl = declaration.load(write_declaration(tmp_path, raw))
  assert decl.image_checks == (("blurry", "ignore"), ("leak", "warn"))
  chosen = image_checks.decisions(decl.image_checks)
  assert (chosen["leak"], chosen["blurry"], chosen["dark"]) == ("warn", "ignore", "warn")
  assert image_checks.decisions()["leak"] == "stop"


@pytest.mark.parametrize("section, message", [
    ({"leaks": "stop"}, r"field 'image_checks.leaks': did you mean 'leak'\? expected one of the keys"),
    ({"leak": "halt"}, "field 'image_checks.leak': expected one of stop, warn, ignore"),
])
def test_a_bad_entry_is_named(tmp_path, section, message):
  raw = dict(digits_raw(), image_checks=section)
  raw.pop("schema")
  with pytest.raises(declaration.DeclarationError, match=message):
    declaration.load(write_declaration(tmp_path, raw))

"""The line format and the exit status."""

from kubeflow.doctor import lines


def test_each_verdict_is_one_line_and_only_a_failure_fails():
  good, bad = lines.ok("a thing"), lines.fail("a thing", "expected x, found y", "do z")
  skipped = lines.unchecked("a thing", "you may not read it")
  assert [str(x) for x in (good, bad, skipped)] == [
      "ok  a thing", "FAIL a thing: expected x, found y; fix: do z",
      "not checked a thing: you may not read it"]
  assert lines.status([good, skipped]) == 0
  assert lines.status([good, skipped, bad]) == 1

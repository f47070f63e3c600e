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


def test_a_message_ending_in_a_full_stop_reads_as_one_sentence_before_its_fix():
  """The kubernetes client's "Invalid kube-config file. No configuration
  found." would read "found.; fix"; an ellipsis stays."""
  said = lines.fail("the Kubernetes cluster", "Invalid kube-config file. No configuration found.",
                    "point KUBECONFIG at the install's cluster")
  assert str(said) == ("FAIL the Kubernetes cluster: Invalid kube-config file. No configuration "
                       "found; fix: point KUBECONFIG at the install's cluster")
  assert str(lines.fail("a", "found x...", "y")) == "FAIL a: found x...; fix: y"

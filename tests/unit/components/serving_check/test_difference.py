"""components/serving_check/check.py's words when a signature's inputs are
not the declared ones: what differs, not two lists (the check itself runs
in its own process: tests/processes/components/serving_check/)."""

from components.serving_check.difference import difference

F = ("float32", [None])


def test_a_renamed_input_is_named_with_what_it_became():
  wanted = {"alcohol": F, "od280/od315_of_diluted_wines": F, "proline": F}
  found = {"alcohol": F, "od280_od315_of_diluted_wines": F, "proline": F}
  assert difference(wanted, found) == (
      "'od280/od315_of_diluted_wines' became 'od280_od315_of_diluted_wines'")


def test_missing_extra_and_retyped_inputs_are_each_named():
  wanted = {"a": F, "b": F, "c": F}
  found = {"a": ("int64", [None]), "c": F, "d": F}
  assert difference(wanted, found) == (
      "'b' missing; 'd' not declared; 'a' is int64 [None], declared float32 [None]")

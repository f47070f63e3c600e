"""components/tuner/tuner.py: the Tuner step's own decisions (the search runs in
tests/e2e/test_tuning.py): how many trial workers, and which span a search
is of."""

import pytest

from components.tuner import tuner


def test_the_worker_count_is_checked_where_it_is_read(monkeypatch):
  monkeypatch.delenv(tuner.WORKERS_ENV, raising=False)
  assert tuner.workers() == 1
  monkeypatch.setenv(tuner.WORKERS_ENV, "3")
  assert tuner.workers() == 3
  for bad in ("0", "two", "-1"):
    monkeypatch.setenv(tuner.WORKERS_ENV, bad)
    with pytest.raises(ValueError) as raised:
      tuner.workers()
    assert str(raised.value) == (f"{tuner.WORKERS_ENV}: expected an integer >= 1, "
                                 f"found {bad!r}")


def test_a_search_is_of_the_newest_span_it_trains_on():
  assert tuner.newest_span(["train_span2", "train_span10", "train_span9"]) == 10
  assert tuner.newest_span(["train"]) is None

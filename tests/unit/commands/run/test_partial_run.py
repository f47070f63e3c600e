"""commands/run/partial_run.py: which nodes a partial run takes outputs from."""

import pytest

from commands.run import partial_run

# ImportExampleGen -> StatisticsGen -> Transform -> Trainer -> Evaluator -> Pusher,
# with BaselineModel feeding the Trainer and the Evaluator.
DAG = {"ImportExampleGen": set(), "BaselineModel": set(),
       "StatisticsGen": {"ImportExampleGen"},
       "Transform": {"ImportExampleGen", "StatisticsGen"},
       "Trainer": {"Transform", "BaselineModel"},
       "Evaluator": {"Trainer", "ImportExampleGen", "BaselineModel"},
       "Pusher": {"Evaluator", "Trainer"}}


def test_the_trainer_alone_reuses_what_it_reads_and_nothing_after_it():
  assert partial_run.reused_nodes(DAG, ["Trainer"], ["Trainer"]) == [
      "ImportExampleGen", "BaselineModel", "StatisticsGen", "Transform"]


def test_from_the_trainer_to_the_end_reuses_its_ancestors_only():
  assert partial_run.reused_nodes(DAG, ["Trainer"], None) == [
      "ImportExampleGen", "BaselineModel", "StatisticsGen", "Transform"]


def test_up_to_statistics_reuses_nothing():
  assert partial_run.reused_nodes(DAG, None, ["StatisticsGen"]) == []


def test_a_whole_run_reuses_nothing():
  assert partial_run.reused_nodes(DAG, None, None) == []


@pytest.mark.parametrize("start", [["Pusher"], ["Evaluator"]])
def test_later_starts_reuse_the_trainer(start):
  assert "Trainer" in partial_run.reused_nodes(DAG, start, None)

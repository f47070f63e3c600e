"""components/tuner/search.py: the order a search's trials are reported in
(best first, whichever way the objective points), and a trial that cannot
train failing alone while the search moves on. The trials' training is
replaced: what is tested is the search's bookkeeping, on a real oracle or a
fake one that hands out trials as keras-tuner's does."""

import dataclasses
import types

import pytest

from components.tuner import search, space
from dataset.tuning import Dimension, Tuning

ACCURACY = Tuning("random", 3, "accuracy", 10, 0, (
    Dimension("learning_rate", "log_uniform", (1e-3, 1e-2)),))
RMSE = dataclasses.replace(ACCURACY, objective="rmse")


def _finish(oracle, score: float, objective: str) -> str:
  trial = oracle.create_trial("worker-0")
  oracle.update_trial(trial.trial_id, {objective: score, "worker": 0.0, "steps": 10.0},
                      step=10)
  trial.status = "COMPLETED"
  oracle.end_trial(trial)
  return trial.trial_id


@pytest.mark.parametrize("tuning, best_first", [(RMSE, [0.2, 0.5, 0.9]),
                                                 (ACCURACY, [0.9, 0.5, 0.2])])
def test_the_best_trial_comes_first_whichever_way_the_objective_points(
    tmp_path, tuning, best_first):
  oracle = space.make_oracle(tuning, 0, str(tmp_path))
  ids = {score: _finish(oracle, score, tuning.objective) for score in (0.5, 0.2, 0.9)}
  found = search.trials(oracle, tuning)
  assert [t["score"] for t in found] == best_first
  assert [t["trial"] for t in found] == [ids[s] for s in best_first]
  assert found[0]["steps"] == 10 and found[0]["worker"] == 0
  assert search.standing(oracle, tuning) == (
      f"3 of 3 trials done, best {tuning.objective} {best_first[0]:.4f} so far "
      f"(trial {ids[best_first[0]]})")


class _Oracle:
  """Hands out `count` trials, then STOPPED, recording what each worker said."""

  def __init__(self, count: int):
    self.left = [types.SimpleNamespace(trial_id=f"{i:02d}", status="RUNNING", message="",
                                       hyperparameters=types.SimpleNamespace(
                                           values={"learning_rate": 0.001 * (i + 1)}))
                 for i in range(count)]
    self.updates, self.ended = [], []

  def create_trial(self, tuner_id):
    return self.left.pop(0) if self.left else types.SimpleNamespace(status="STOPPED")

  def update_trial(self, trial_id, metrics, step):
    self.updates.append((trial_id, metrics, step))

  def end_trial(self, trial):
    self.ended.append((trial.trial_id, trial.status, trial.message))


def test_a_trial_that_cannot_train_fails_alone_and_the_search_goes_on(monkeypatch):
  def run_trial(data, values, steps, objective):
    if values["learning_rate"] == 0.001:
      raise ValueError("loss is NaN")
    return {objective: 0.75, "seconds": 2.0, "steps": float(steps)}
  monkeypatch.setattr(search, "run_trial", run_trial)
  oracle, said = _Oracle(2), []
  search.work(oracle, "worker-1", ACCURACY, data=None, say=said.append)

  assert [(t, status) for t, status, _ in oracle.ended] == [("00", "FAILED"),
                                                            ("01", "COMPLETED")]
  assert "ValueError: loss is NaN" in oracle.ended[0][2]
  assert oracle.updates == [("01", {"accuracy": 0.75, "seconds": 2.0, "steps": 10.0,
                                    "worker": 1.0}, 10)]
  assert said[0] == "trial 00 (worker-1) failed: ValueError: loss is NaN"
  assert said[1] == ('trial 01 (worker-1): accuracy 0.7500 in 2.0 s, '
                     '{"learning_rate": 0.002}')


def test_two_workers_on_one_oracle_each_run_trials_at_once_and_none_twice(
    tmp_path, monkeypatch):
  """What a search with two worker processes does, with their start made
  even: each worker's first trial waits until the other holds one too, so
  both must have been dealt one at the same time (a search that handed its
  trials to one worker at a time would never get past the barrier). Which
  worker runs the rest is the oracle's, first come, first served."""
  import threading
  both_started = threading.Barrier(2, timeout=120)
  first_of = {}

  def run_trial(data, values, steps, objective):
    me = threading.current_thread().name
    if me not in first_of:
      first_of[me] = values
      both_started.wait()
    return {objective: values["learning_rate"] * 10, "seconds": 0.1, "steps": float(steps)}
  monkeypatch.setattr(search, "run_trial", run_trial)
  tuning = dataclasses.replace(ACCURACY, max_trials=4)
  oracle = space.make_oracle(tuning, 0, str(tmp_path))
  said, counts = [], {}

  def worker(i):
    counts[i] = search.work(oracle, f"worker-{i}", tuning, data=None, say=said.append)
  threads = [threading.Thread(target=worker, args=(i,), name=f"worker-{i}") for i in (0, 1)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(timeout=300)
  assert not any(t.is_alive() for t in threads), "a worker never finished: " + repr(said)

  found = search.trials(oracle, tuning)
  assert len(found) == 4 and len({t["trial"] for t in found}) == 4, found
  assert {t["worker"] for t in found} == {0, 1}, found
  assert counts[0] >= 1 and counts[1] >= 1 and counts[0] + counts[1] == 4, counts
  for i in (0, 1):
    n = counts[i]
    assert f"worker-{i} stopped: {n} trial{'' if n == 1 else 's'} run, none left" in said, said


def test_the_chief_alone_says_no_stop_line_and_counts_its_trials(tmp_path, monkeypatch):
  monkeypatch.setattr(search, "run_trial", lambda data, values, steps, objective: {
      objective: 0.5, "seconds": 1.0, "steps": float(steps)})
  said = []
  oracle = space.make_oracle(ACCURACY, 0, str(tmp_path))
  assert search.work(oracle, "worker-0", ACCURACY, data=None, say=said.append,
                     chief=True) == 3
  assert len(said) == 3, said
  assert not [line for line in said if "stopped" in line], said

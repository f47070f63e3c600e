"""components/tuner/space.py: the declaration's search as keras-tuner's oracle, whose
state survives a Tuner killed while it writes."""

import glob
import os

import pytest
import tensorflow as tf

from components.tuner import space
from dataset.tuning import Dimension, Tuning

TUNING = Tuning("random", 4, "accuracy", 20, 0, (
    Dimension("learning_rate", "log_uniform", (1e-3, 1e-2)),
    Dimension("width", "int", (32, 64))))


def _finish_one(oracle, score: float) -> str:
  trial = oracle.create_trial("worker-0")
  oracle.update_trial(trial.trial_id, {"accuracy": score}, step=1)
  trial.status = "COMPLETED"
  oracle.end_trial(trial)
  return trial.trial_id


@pytest.mark.parametrize("algorithm", ["random", "bayesian", "hyperband"])
def test_each_algorithm_proposes_values_inside_the_declared_space(tmp_path, algorithm):
  import dataclasses
  oracle = space.make_oracle(dataclasses.replace(TUNING, algorithm=algorithm), 0,
                             str(tmp_path))
  values = oracle.create_trial("worker-0").hyperparameters.values
  assert 1e-3 <= values["learning_rate"] <= 1e-2 and 32 <= values["width"] <= 64, values


def test_a_tuner_killed_while_it_writes_leaves_the_last_whole_state(tmp_path, monkeypatch):
  state = str(tmp_path / "oracle")
  oracle = space.make_oracle(TUNING, 0, state)
  first = _finish_one(oracle, 0.9)
  path = oracle._get_oracle_fname()
  saved = open(path).read()

  def killed(*args, **kwargs):  # the process dies between writing and renaming
    raise SystemExit("killed")
  monkeypatch.setattr(tf.io.gfile, "rename", killed)
  with pytest.raises(SystemExit):
    _finish_one(oracle, 0.8)
  monkeypatch.undo()
  assert open(path).read() == saved, "oracle.json was written in place"
  assert glob.glob(os.path.join(state, "**", "*.json.tmp"), recursive=True)
  # The retried Tuner reloads the search from what was whole: the first trial.
  again = space.make_oracle(TUNING, 0, state)
  done = [t.trial_id for t in again.trials.values() if t.status == "COMPLETED"]
  assert done == [first], done


def test_a_tuner_killed_between_a_trials_file_and_the_oracles_runs_it_not_again(tmp_path):
  """end_trial writes trial.json, then oracle.json. Killed in between, the
  trial's file says COMPLETED and the oracle's says it is still running:
  the resumed search keeps it as done instead of running it again
  (tests/e2e/test_tuning.py's interrupted search failed so once)."""
  state = str(tmp_path / "oracle")
  oracle = space.make_oracle(TUNING, 0, state)
  first = _finish_one(oracle, 0.9)

  trial = oracle.create_trial("worker-0")
  oracle.update_trial(trial.trial_id, {"accuracy": 0.8}, step=1)
  trial.status = "COMPLETED"

  def killed():  # the process dies once the trial's own file is written
    raise SystemExit("killed")
  oracle.save = killed
  with pytest.raises(SystemExit):
    oracle.end_trial(trial)
  again = space.make_oracle(TUNING, 0, state)
  done = sorted(t.trial_id for t in again.trials.values() if t.status == "COMPLETED")
  assert len(done) == 2 and first in done, done
  following = again.create_trial("worker-0")
  assert following.trial_id not in done, f"trial {following.trial_id} ran again"
  assert sorted(again.end_order) == done, again.end_order

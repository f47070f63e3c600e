"""Hyperparameter search: keras-tuner's oracles driving the Trainer's own code.

space.py   the declaration's `tuning:` as keras-tuner's HyperParameters and oracle
trial.py   one trial: train through trainer.run.train, score on the eval split
search.py  the search: one worker in process, or N worker processes (worker.py)
           beside the oracle, in keras-tuner's distributed mode on 127.0.0.1
record.py  the searches kept in the serving dir, and whether a run reuses one

The TFX component is components/tuner/tuner.py.
"""

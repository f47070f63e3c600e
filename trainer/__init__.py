"""The Trainer's code: input pipeline, model, training loops, checkpoints,
export, run_fn. It runs under tf-keras (Keras 2), the choice every entry
point makes first (runtime/startup.py); `trainer.model` checks that it took effect.
"""

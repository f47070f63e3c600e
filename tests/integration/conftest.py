"""Tests that run TensorFlow, TFT or TFMA for real in pytest's process: a
model trained and exported, a Beam pipeline of Transform or the Evaluator,
seconds each. Like tests/unit/, none starts a second process or a pipeline
(tests/in_process.py); at the same mirrored paths."""

from tests.in_process import in_this_process  # noqa: F401  (an autouse fixture)

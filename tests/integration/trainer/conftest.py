"""The digits test_loop.py trains on (tests/training.py)."""

from tests.training import digits  # noqa: F401  (a fixture)

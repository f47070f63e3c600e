"""The fast tests: each in this process, in milliseconds to a second, none
starting a pipeline or a second process (tests/in_process.py), none
training a model or running a Beam pipeline (those are in
tests/integration/). tests/unit/test_architecture.py checks the tree
mirrors the code."""

from tests.in_process import in_this_process  # noqa: F401  (an autouse fixture)

"""The digits both training files here read, made once when one process runs
both (`-n 0`, or an xdist worker given both files)."""

from tests.training import digits  # noqa: F401  (a fixture)

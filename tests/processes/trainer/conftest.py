"""The digits both training files here read, made once when one process runs
both (`-n 0`, or an xdist worker given both files): the Transform of 1797
digits is half a minute."""

import pytest

from tests.training import transformed_digits


@pytest.fixture(scope="package")
def digits(tmp_path_factory):
  """All 1797 digits through the real preprocessing_fn, split 1400 / 397."""
  return transformed_digits(tmp_path_factory.mktemp("digits"))

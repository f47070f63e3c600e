"""The error every convert source and the writer raise for bad input."""


class ConvertError(Exception):
  """An input that cannot be converted: names the path or row, and why."""

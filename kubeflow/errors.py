"""The errors `python -m commands.kubeflow` turns into one line and an exit status.

Here, apart from the modules that raise them, so that the command line can
name them without loading TFX (compile) or kfp (the API client) before it
has parsed a flag.
"""


class CompileError(ValueError):
  """The configuration cannot be compiled for Kubeflow; says why."""


class KubeflowError(RuntimeError):
  """What went wrong talking to Kubeflow, in one line."""

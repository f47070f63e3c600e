"""`tfx.components`, imported only as far as a process uses it.

TFX's `tfx/components/__init__.py` imports all sixteen components, and with
them TFMA, keras-tuner (and its Keras 3) and BulkInferrer's TensorFlow
Serving protos. Any `import tfx.components.<one>.executor` runs it first, as
a package's parent always runs: a Kubeflow step, which needs one executor,
paid for all of them (docs/performance.md, "Start-up").

`lazy_components` has the package's first import skip its `__init__`: a
submodule imports as usual, and the first other name asked of it
(`tfx.components.Evaluator`, `from tfx.components import Trainer`) runs the
real `__init__` into the same module, so every name it defines is there.
Nothing is imported until the process imports `tfx.components` itself.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

PACKAGE = "tfx.components"


class _Loader(importlib.abc.Loader):
  """Makes the package without running its `__init__` until a name in it,
  other than a submodule, is asked for."""

  def __init__(self, real: importlib.abc.Loader):
    self.real = real

  def exec_module(self, module) -> None:
    real = self.real

    def __getattr__(name: str):
      if name.startswith("__"):
        raise AttributeError(name)
      try:
        return importlib.import_module(f"{PACKAGE}.{name}")
      except ModuleNotFoundError as e:
        if e.name != f"{PACKAGE}.{name}":
          raise
      # A name the real __init__ defines. Run it once, without this hook,
      # so that a name it lacks raises AttributeError as usual.
      del module.__getattr__
      real.exec_module(module)
      return getattr(module, name)

    module.__getattr__ = __getattr__


class _Finder(importlib.abc.MetaPathFinder):
  """Finds `tfx.components` once, as the path finder would, with _Loader."""

  def find_spec(self, fullname, path, target=None):
    if fullname != PACKAGE:
      return None
    sys.meta_path.remove(self)
    spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
    if spec is not None and spec.loader is not None:
      spec.loader = _Loader(spec.loader)
    return spec


def lazy_components() -> None:
  """Has the first import of `tfx.components` skip its `__init__`; a no-op
  once it is imported, or once this was called."""
  if PACKAGE in sys.modules or any(isinstance(f, _Finder) for f in sys.meta_path):
    return
  sys.meta_path.insert(0, _Finder())

"""Process set-up: one explicit call, `start`, that every entry point makes first.

It does, before TensorFlow loads (each is read once, when it does):
- the Keras choice: tf-keras (Keras 2), `TF_USE_LEGACY_KERAS=1`. Under Keras
  3, the default in TF 2.16, TFX 1.16's Trainer fails ("`inputs` not
  connected to `outputs`"), TFT's transform layer is a Keras 2 layer, and
  MultiWorkerMirroredStrategy with `fit` fails. `trainer/model.py` refuses
  to build a model if the choice did not take effect;
- the tensorflow-io guard: TFMA imports tensorflow-io whenever it is
  installed, and a process that loaded it aborts at exit (134); it stays
  unloaded until an s3:// URI needs it (runtime/storage.py `enable`);
- `tfx.components` imported only as far as the process uses it
  (lazy_imports.py): a Kubeflow step needs one executor, not all sixteen
  components;
- how much the process prints, when asked (`quiet`): TensorFlow's C++ logs,
  Python warnings (also for child processes, through the environment), and
  the libraries' Python loggers. Errors always print.

Nothing is set by importing a package: an import side effect reaches only
the processes that happen to import it, and Beam's SDK workers on Flink,
Spark or Dataflow import none of ours. For those, the image declares the
same Keras choice in its environment (kubeflow/Dockerfile, KERAS_ENV).
"""

# The package only names its calls; importing it sets nothing up.
from runtime.process import KERAS_ENV, NOISY_LOGGERS, allow_tensorflow_io, start

__all__ = ["KERAS_ENV", "NOISY_LOGGERS", "allow_tensorflow_io", "start"]

"""The Trainer's code: input pipeline, model, training loops, export, run_fn.

Keras choice, made here once for every entry point (the local runner, the
tests, and the Kubeflow container all import this package, through
`components`, before they touch `tf.keras`): tf-keras, i.e. Keras 2. Under
Keras 3, the default in TF 2.16, TFX 1.16's Trainer fails with "`inputs` not
connected to `outputs`", TFT's transform layer is a Keras 2 layer, and
`MultiWorkerMirroredStrategy` with `fit` fails. TF reads this variable when
`tf.keras` is first touched, so it must be set before then; `trainer.model`
checks that it took effect.

The same entry points get `storage`'s guard from here: tensorflow-io stays
unloaded until an s3:// URI needs it (storage/).
"""

import os

import storage  # noqa: F401  (keeps tensorflow-io unloaded until s3:// needs it)

os.environ["TF_USE_LEGACY_KERAS"] = "1"

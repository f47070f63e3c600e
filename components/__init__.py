"""The pipeline's own TFX components and executors.

Importing this package makes the project's Keras choice (see `trainer`)
before any TFX module loads Keras.
"""

import trainer  # noqa: F401  (the Keras choice, before TF loads Keras)

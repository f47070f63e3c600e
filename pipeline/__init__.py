"""The pipeline definition: one runner-agnostic `create_pipeline`."""

import components  # noqa: F401  (makes the Keras choice before TF loads Keras)

"""The pipeline definition: one runner-agnostic `create_pipeline`."""

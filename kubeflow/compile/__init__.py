"""Compiling `create_pipeline` for Kubeflow Pipelines v2, on the user's
machine: the command, TFX's compiler and what it leaves out, the platform
config, and the steps added to the spec (each through `spec.add_step`)."""

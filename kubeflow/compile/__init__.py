"""Compiling `create_pipeline` for Kubeflow Pipelines v2 or Vertex AI, on the
user's machine: TFX's compiler and what it leaves out, the backend's rules,
the platform config, and the steps added to the spec (each through
`spec.add_step`). The command is commands/kubeflow/compile.py."""

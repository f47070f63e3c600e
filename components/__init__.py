"""The pipeline's own TFX components and executors."""

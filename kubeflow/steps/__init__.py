"""What the image runs in a Kubeflow step: the entrypoint of every TFX step,
the steps' records, and the steps the compiler adds (the run report,
retention, the exit handler's notice). Nothing here imports compile code."""

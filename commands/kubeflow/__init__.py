"""`python -m commands.kubeflow`: compile, run, schedule and clean up a pipeline on Kubeflow
Pipelines or Vertex AI (kubeflow/ holds what each command calls)."""

"""Kubeflow Pipelines' API server and Vertex AI from the user's machine: the
kfp client (`client.py`), cron expressions each accepts (`schedules.py`),
Vertex AI's PipelineJobs and schedules (`vertex.py`), and a run's folder in
the bucket (`run_folders.py`). The commands that call them are
commands/kubeflow/runs.py."""

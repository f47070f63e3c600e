"""Kubeflow Pipelines' API server from the user's machine: the client, runs
(submit, runs) and recurring runs (schedule, schedules)."""

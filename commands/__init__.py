"""What a user types: a local run's body (`run/`; `local_runner.py` calls it), `tfrecords`,
`python -m commands.debug`, `commands.serving`, `commands.retention`, `commands.kubeflow`."""

"""Running a pipeline, apart from the DAG (pipeline/): the flags both
runners share, the preparation before anything runs or compiles, the run
lock, partial runs, the progress lines, and executing a local run with its
report, its verdict and retention. `local_runner.py` only chooses paths and
calls `execute.main`."""

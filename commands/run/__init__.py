"""Running a pipeline, apart from the DAG (pipeline/): the flags both
runners share, the preparation before anything runs or compiles, partial
runs, and executing a local run with its report, its verdict and retention
(`execute.py`). `local_runner.py` only chooses paths and calls
`execute.main`; the run lock is store/run_lock.py, the progress lines
runtime/progress/."""

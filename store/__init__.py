"""What runs leave, and reading it back: ML Metadata's record of each run (`store/metadata/`),
the HTML report drawn from it (`store/report/`), retention of older runs' artifacts
(`store/retention/`), and the lock that keeps two runs of a pipeline apart (`run_lock.py`)."""

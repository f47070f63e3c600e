"""Debugging tools for local runs: what ran, what it read and wrote, and a report.

Everything here reads the pipeline root and the ML Metadata file that
`local_runner.py` writes; nothing here changes them.

    python -m debug runs        each run, each component's state and duration
    python -m debug artifacts   a run's (or one component's) inputs and outputs
    python -m debug lineage     what produced a pushed model
    python -m debug report      the run's HTML report (every local run writes one)
"""

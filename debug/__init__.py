"""Debugging tools for local runs: what ran, what it read and wrote, and a report.

Everything here reads the pipeline root and the ML Metadata file that
`local_runner.py` writes, and changes neither; no run depends on this
package (a run's outcome is read by metadata/, its report written by
report/). The serving dir's versions and rollbacks are `python -m serving`.

    python -m debug runs        each run, each component's state and duration
    python -m debug artifacts   a run's (or one component's) inputs and outputs
    python -m debug lineage     what produced a pushed model
    python -m debug report      the run's HTML report (every local run writes one)
    python -m debug skew        served requests against the training statistics
"""

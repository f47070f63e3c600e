"""Debugging tools for local runs: what ran, what it read and wrote, and a report.

Everything here reads the pipeline root and the ML Metadata file that
`local_runner.py` writes, and changes neither; no run depends on this
package (a run's outcome is read by store/metadata/, its report written by
store/report/). The serving dir's versions and rollbacks are `python -m commands.serving`.

    python -m commands.debug runs        each run, each component's state and duration
    python -m commands.debug artifacts   a run's (or one component's) inputs and outputs
    python -m commands.debug lineage     what produced a pushed model
    python -m commands.debug report      the run's HTML report (every local run writes one)
    python -m commands.debug skew        served requests against the training statistics
"""
